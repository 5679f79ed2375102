import { specialSecretSig, specialSigKey, unknownValue } from "@pulumi/pulumi/runtime/rpc";
import { type JavaScriptValue, Struct } from "google-protobuf/google/protobuf/struct_pb";

/**
 * The engine's property values on the wire: a protobuf Struct in which a secret is an object tagged
 * with Pulumi's signature key and an unknown (a value not known until an apply, in a preview) is a
 * sentinel string. The constants are the Node SDK's own, so this file never restates them.
 */

export type Properties = Record<string, unknown>;

/** The sentinel an unknown value is on the wire; the rules' `check` already passes it through unvalidated. */
export const UNKNOWN = unknownValue;

/** Plain values, and the top-level properties that held a secret anywhere inside. */
export interface Unwrapped {
  values: Properties;
  secrets: Set<string>;
}

function isSecret(value: unknown): value is { value: unknown } {
  return typeof value === "object" && value !== null && (value as Properties)[specialSigKey] === specialSecretSig;
}

function unwrap(value: unknown, found: () => void): unknown {
  if (isSecret(value)) {
    found();
    return unwrap(value.value, found);
  }
  if (Array.isArray(value)) return value.map((item) => unwrap(item, found));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, unwrap(item, found)]));
  }
  return value;
}

/** A request's Struct as plain values; a secret's value is taken out, and its property remembered. */
export function fromStruct(struct: Struct | undefined): Unwrapped {
  const secrets = new Set<string>();
  const values: Properties = {};
  for (const [key, value] of Object.entries(struct?.toJavaScript() ?? {})) {
    values[key] = unwrap(value, () => secrets.add(key));
  }
  return { values, secrets };
}

/** The wire has no `undefined`: an absent property is left out, in lists as null. */
function defined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : defined(item)));
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    return Object.fromEntries(entries.map(([key, item]) => [key, defined(item)]));
  }
  return value;
}

/** Plain values as a Struct, each of `secrets` wrapped so the engine stores it encrypted and shows [secret]. */
export function toStruct(values: Properties, secrets: Iterable<string> = []): Struct {
  // Plain JSON-like values from here on: `defined` has taken out what the wire cannot carry.
  const wire = defined(values) as Record<string, JavaScriptValue>;
  for (const key of secrets) {
    if (key in wire) wire[key] = { [specialSigKey]: specialSecretSig, value: wire[key] ?? null };
  }
  return Struct.fromJavaScript(wire);
}
