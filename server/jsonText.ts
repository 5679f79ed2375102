import { isUtf8 } from "node:buffer";
import { invalidRequest } from "./errors";

/**
 * What a JSON body must be before anything walks it: nested no deeper than any endpoint needs, and
 * valid UTF-8. Both are checked once, right after parsing, so that nothing after (the idempotency
 * fingerprint, the schemas) recurses into an attacker's depth or stores a replacement character in
 * place of bytes the client sent.
 */

/** The deepest body any endpoint takes is three levels; this leaves room and stays far from the stack's end. */
export const MAX_JSON_DEPTH = 32;

/** A lone surrogate: UTF-8 decoding never yields one, so it marks the first invalid byte unambiguously. */
const INVALID_MARK = "\uD800";

/** Parses `bytes` as JSON; a body that is not valid UTF-8 is a 400 naming the field that holds the bad bytes. */
export function parseJsonBytes(bytes: Buffer): unknown {
  const text = bytes.toString("utf8");
  const bad = firstInvalidCharacter(bytes);
  if (bad === undefined) return checkedDepth(JSON.parse(text));
  // Parsed with the first replacement character swapped for the mark, to find where it sits.
  const marked = checkedDepth(JSON.parse(`${text.slice(0, bad)}${INVALID_MARK}${text.slice(bad + 1)}`));
  const found = findMark(marked);
  const issue =
    found?.inName === true
      ? { path: found.path || "(body)", message: "has a field name that is not valid UTF-8" }
      : { path: found?.path || "(body)", message: "is not valid UTF-8" };
  throw invalidRequest([issue]);
}

/** The index, in `bytes` decoded with replacement characters, of the first one that replaced invalid UTF-8. */
function firstInvalidCharacter(bytes: Buffer): number | undefined {
  if (isUtf8(bytes)) return undefined;
  // A prefix that holds an invalid sequence fails to decode, and so does every longer one: bisect.
  const decodes = (length: number): boolean => {
    try {
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes.subarray(0, length), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  let valid = 0;
  let invalid = bytes.length;
  while (invalid - valid > 1) {
    const middle = Math.floor((valid + invalid) / 2);
    if (decodes(middle)) valid = middle;
    else invalid = middle;
  }
  // The characters complete before the bad sequence (stream: an unfinished one at the end is held back).
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes.subarray(0, valid), { stream: true }).length;
}

/** The parsed body, once it is known to nest no deeper than {@link MAX_JSON_DEPTH}; walked without recursion. */
function checkedDepth(value: unknown): unknown {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== "object") continue;
    if (depth > MAX_JSON_DEPTH)
      throw invalidRequest([{ path: "(body)", message: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return value;
}

/** Where the mark is: the dotted path of the string holding it, or of the object whose field name holds it. */
function findMark(value: unknown): { path: string; inName: boolean } | undefined {
  const pending: [unknown, string][] = [[value, ""]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, path] = next;
    if (typeof node === "string" && node.includes(INVALID_MARK)) return { path, inName: false };
    if (node === null || typeof node !== "object") continue;
    for (const [name, child] of Object.entries(node)) {
      if (name.includes(INVALID_MARK)) return { path, inName: true };
      pending.push([child, path === "" ? name : `${path}.${name}`]);
    }
  }
  return undefined;
}
