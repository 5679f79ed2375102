import { unknownValue } from "@pulumi/pulumi/runtime/rpc";
import { SECRET_SIGNATURE } from "../provider/core/pulumiState";
import { PROVIDER_INPUT } from "../provider/dynamic/serializedStub";

/**
 * How a command reads the engine's events (`drift` and `plan` alike): which resources are the
 * engine's own, how secrets and unknowns arrive and are shown, and what changed between two property
 * bags. One set of rules, so two commands never show the same step differently.
 */

/** The stack resource and the provider resources: the engine's own, never a user's resource. */
const ENGINE_OWN_TYPES = /^pulumi:(providers:|pulumi:Stack$)/;

export function isEngineOwnType(type: string): boolean {
  return ENGINE_OWN_TYPES.test(type);
}

/** The logical name in the program: the URN's last part. */
export function resourceName(urn: string): string {
  return urn.split("::").pop() ?? urn;
}

export const SECRET_VALUE = "[secret]";
export const UNKNOWN_VALUE = "[unknown]";

/**
 * A property value as a command may show it: secrets (the engine sends `{ciphertext: "[secret]"}`, a
 * state export Pulumi's signature object) become "[secret]", the engine's unknown sentinel (a value
 * known only after an apply) "[unknown]", and the serialized provider (`__provider`, long and of no
 * use to a reader) is dropped.
 */
export function masked(value: unknown): unknown {
  if (value === unknownValue) return UNKNOWN_VALUE;
  if (Array.isArray(value)) return value.map(masked);
  if (value !== null && typeof value === "object") {
    if ("ciphertext" in value || SECRET_SIGNATURE in value) return SECRET_VALUE;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== PROVIDER_INPUT)
        .map(([key, inner]) => [key, masked(inner)]),
    );
  }
  return value;
}

/** `__provider` and `__identity` are the provider's plumbing, not properties a user declared or reads. */
const isPlumbing = (key: string) => key.startsWith("__");

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

export interface PropertyDifference {
  /** Dotted path, e.g. `limits.monthlyGb`. */
  path: string;
  before: unknown;
  after: unknown;
}

/**
 * Every leaf that differs between two property bags, by dotted path, sorted: objects are walked,
 * arrays and scalars compared whole. Absent and null are the same value (a provider may record
 * either for "not set"). Mask both bags first (`masked`) so a secret is compared as "[secret]".
 */
export function propertyDifferences(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  prefix = "",
): PropertyDifference[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => !isPlumbing(key)).sort();
  return keys.flatMap((key) => {
    const path = prefix ? `${prefix}.${key}` : key;
    const old = before[key];
    const next = after[key];
    if (isPlainObject(old) && isPlainObject(next)) return propertyDifferences(old, next, path);
    return JSON.stringify(old ?? null) === JSON.stringify(next ?? null) ? [] : [{ path, before: old, after: next }];
  });
}
