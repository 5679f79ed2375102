/**
 * The one file that couples the native provider to today's rules: each resource kind's declaration
 * and handler (provider/<kind>.ts, through runtime.ts), and the provider context's config. Everything
 * else in provider/native/ sees only `NativeKind`. When the rules become one descriptor per kind, this
 * file maps that list instead, and the probes below become the descriptor's own `{updates, replaces}`.
 */
import { apiKey } from "../apiKey";
import { configure } from "../context";
import { type Declaration, type Handler, upgradeState } from "../declaration";
import { IDENTITY_INPUT, identityDigest } from "../idempotency";
import { ipAllocation } from "../ipAllocation";
import { proxyUser } from "../proxyUser";
import { handlers } from "../runtime";
import { providerSettings, SETTING_KEYS } from "../settings";
import { PartialFailure, same } from "../shared";
import type { Properties } from "./protocol";

export const PACKAGE = "proxy";

export interface NativeKind {
  /** `proxy:index:ProxyUser` */
  token: string;
  /** `ProxyUser`, for messages. */
  name: string;
  declaration: Declaration;
  handler: Handler;
}

export const KINDS: readonly NativeKind[] = [
  { token: "proxy:index:ProxyUser", name: "ProxyUser", declaration: proxyUser, handler: handlers.proxyUser },
  { token: "proxy:index:ApiKey", name: "ApiKey", declaration: apiKey, handler: handlers.apiKey },
  {
    token: "proxy:index:IpAllocation",
    name: "IpAllocation",
    declaration: ipAllocation,
    handler: handlers.ipAllocation,
  },
];

export function kindOf(token: string): NativeKind {
  const kind = KINDS.find((candidate) => candidate.token === token);
  if (!kind) {
    throw new Error(
      `pulumi-proxy: ${token} is not a resource of this provider; use one of ${KINDS.map((k) => k.token).join(", ")}.`,
    );
  }
  return kind;
}

const unprefixed = (full: string) => full.slice(`${PACKAGE}:`.length);

/** The provider's config by its key without the package prefix (`apiUrl`); `secret` ones are stored encrypted. */
export const CONFIG: readonly { key: string; type: "string" | "integer"; secret?: boolean }[] = [
  { key: "apiUrl", type: "string" },
  { key: "apiKey", type: "string", secret: true },
  ...SETTING_KEYS.map((full) => ({ key: unprefixed(full), type: "integer" as const })),
];

/** Each setting the provider would refuse at its first request, refused when the engine checks the config. */
export function configFailures(config: Properties): { property: string; reason: string }[] {
  return SETTING_KEYS.flatMap((setting) => {
    try {
      // One setting at a time, so that each bad one is named.
      providerSettings((full) => (full === setting ? stringSetting(config, full) : undefined));
      return [];
    } catch (error) {
      return [{ property: unprefixed(setting), reason: (error as Error).message }];
    }
  });
}

function stringSetting(config: Properties, full: string): string | undefined {
  const value = config[unprefixed(full)];
  return value === undefined || value === null || value === "" ? undefined : String(value);
}

/** An object the rules created before a later step failed: the engine records it instead of orphaning it. */
export function partiallyCreated(error: unknown): PartialFailure | undefined {
  return error instanceof PartialFailure ? error : undefined;
}

/** Hands the provider's config to the same context the dynamic provider uses, with the same environment fallback. */
export function configureFrom(config: Properties): void {
  configure({ config: { get: (full: string) => stringSetting(config, full) } } as never);
}

/**
 * The idempotency identity (idempotency.ts) from the URN, which names the stack, the project, the
 * type chain of the parents and the resource: unique within a stack, the same on every run. The URN
 * holds no organization, so the digest has none.
 */
export function withIdentity(urn: string, inputs: Properties): Properties {
  const [head = "", project = "", qualifiedType = "", ...rest] = urn.split("::");
  const stack = head.split(":").slice(2).join(":");
  const name = rest.join("::");
  const types = qualifiedType.split("$");
  const type = types.pop() ?? "";
  const identity = identityDigest({ organization: "", project, stack, type, name, parents: types.reverse() });
  return { ...inputs, [IDENTITY_INPUT]: identity };
}

export type ChangeKind = "update" | "replace";

export interface DetailedDiff {
  changes: boolean;
  replaces: string[];
  /** Each input whose change alone makes the rules act, and whether that change replaces. */
  properties: Record<string, ChangeKind>;
}

function inputKeys(kind: NativeKind): string[] {
  return Object.keys(kind.declaration.inputs);
}

async function ruleDiff(kind: NativeKind, olds: Properties, news: Properties) {
  return (await kind.handler.diff("", olds, news)) as { changes: boolean; replaces: string[] };
}

/**
 * The rules' diff, and per property what it does. The handler gives only the whole answer (changes,
 * replaces), so each changed input is put alone on top of the old inputs and the same rule is asked
 * again: what it answers for that input alone is that input's kind of change.
 */
export async function detailedDiff(kind: NativeKind, olds: Properties, news: Properties): Promise<DetailedDiff> {
  const whole = await ruleDiff(kind, olds, news);
  const properties: Record<string, ChangeKind> = {};
  if (!whole.changes) return { changes: false, replaces: [], properties };
  const changedKeys = inputKeys(kind).filter((key) => !same(olds[key], news[key]));
  const unchanged = { ...news };
  for (const key of changedKeys) {
    if (olds[key] === undefined) delete unchanged[key];
    else unchanged[key] = olds[key];
  }
  for (const key of changedKeys) {
    // With one change the whole answer is that change's: no second call (a rule may warn as it decides).
    const alone = changedKeys.length === 1 ? whole : await ruleDiff(kind, olds, { ...unchanged, [key]: news[key] });
    if (alone.replaces.includes(key) || whole.replaces.includes(key)) properties[key] = "replace";
    else if (alone.changes) properties[key] = "update";
  }
  return { changes: true, replaces: whole.replaces, properties };
}

/** A value no input ever holds: a probe's "changed to something else". */
const PROBE = "\u0000probe";

/** The inputs whose change replaces the resource, asked of the rules (for the schema's replaceOnChanges). */
export async function replaceOnChanges(kind: NativeKind): Promise<string[]> {
  const defaults = upgradeState(kind.declaration, {}) as Properties;
  const replacing: string[] = [];
  for (const key of inputKeys(kind)) {
    const { replaces } = await ruleDiff(kind, defaults, { ...defaults, [key]: PROBE });
    if (replaces.includes(key)) replacing.push(key);
  }
  return replacing;
}

/**
 * The inputs of an imported resource: each input the API reports back as an output of the same name
 * (the name, the limits, the scopes, the place), so that a program declaring them shows no change.
 * What the API does not report (triggers, settings of the next replacement) is left to its default.
 */
export function importedInputs(kind: NativeKind, state: Properties): Properties {
  const reported = inputKeys(kind).filter((key) => key in kind.declaration.outputs && state[key] != null);
  return Object.fromEntries(reported.map((key) => [key, state[key]]));
}

/** Secret outputs the API gives only when the object is created or rotated, which an import therefore lacks. */
export function missingSecrets(kind: NativeKind, state: Properties): string[] {
  return kind.declaration.secretOutputs.filter((key) => state[key] == null);
}
