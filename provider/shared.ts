import type * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import { ApiError, ConflictError, ErrorCode, isNotFound, PermissionDeniedError } from "../sdk";

/** The engine's placeholder for a value that is not known until an apply, as seen by a dynamic provider. */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export function isUnknown(value: unknown): boolean {
  return value === UNKNOWN;
}

/** Collects check failures, one per property, so a preview reports every bad input at once. */
export class CheckFailures {
  readonly failures: pulumi.dynamic.CheckFailure[] = [];

  add(property: string, reason: string): void {
    this.failures.push({ property, reason });
  }

  /**
   * Validates a known value against one of the SDK's wire schemas, so the provider enforces exactly the
   * bounds the API does. Unknown values (outputs of other resources during preview) pass.
   */
  validate<T>(property: string, schema: z.ZodType<T>, value: unknown): T | undefined {
    if (isUnknown(value)) return undefined;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      const where = [property, ...issue.path.map(String)].join(".");
      this.add(where, `${where} ${issue.message}${describeValue(value, issue.path)}`);
    }
    return undefined;
  }

  result<T>(inputs: T): pulumi.dynamic.CheckResult<T> {
    return this.failures.length > 0 ? { failures: this.failures } : { inputs };
  }
}

function describeValue(value: unknown, path: PropertyKey[]): string {
  let current: unknown = value;
  for (const key of path) current = (current as Record<PropertyKey, unknown> | undefined)?.[key];
  if (typeof current === "number" && !Number.isNaN(current)) return ` (got ${current})`;
  if (typeof current === "string") return ` (got ${JSON.stringify(current.slice(0, 80))})`;
  if (typeof current === "number") return " (got NaN)";
  return "";
}

/** Equality for JSON-like property values; null and undefined both mean "not set". */
export function same(a: unknown, b: unknown): boolean {
  if (a == null || b == null) return a == null && b == null;
  if (typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => same((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/** Builds a DiffResult from the properties that update in place and those that force a replacement. */
export function diffResult(updates: string[], replaces: string[]): pulumi.dynamic.DiffResult {
  return { changes: updates.length + replaces.length > 0, replaces, deleteBeforeReplace: false };
}

/**
 * Thrown after the API created an object but a later step failed: the dynamic-provider host turns an
 * error with an `id` into a partial failure, so the engine records the object instead of orphaning it.
 */
export class PartialFailure extends Error {
  constructor(
    message: string,
    readonly id: string,
    readonly properties: Record<string, unknown>,
    readonly reasons: string[] = [message],
  ) {
    super(message);
    this.name = "PartialFailure";
  }
}

/** Runs an API call and returns undefined on 404, for read and delete. */
export async function unlessGone<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Awaits an API call and, when it fails, rethrows the failure rewritten by `explain`. */
export async function explained<T>(resource: string, action: string, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw explain(resource, action, error);
  }
}

/**
 * Rewrites an SDK error into one a user can act on: which resource, what went wrong, and the fix.
 * SDK errors never carry a credential, so the message is safe to show.
 */
export function explain(resource: string, action: string, error: unknown): Error {
  if (error instanceof PermissionDeniedError) {
    const scopes = error.requiredScopes.join(", ") || "a scope it lacks";
    return new Error(
      `${resource}: cannot ${action}: the API key in proxy:apiKey lacks ${scopes}. Use a key that has ${scopes}.`,
      { cause: error },
    );
  }
  if (error instanceof ConflictError && error.code === ErrorCode.enum.conflict) {
    return new Error(
      `${resource}: cannot ${action}: ${error.serverMessage} Choose another name, or adopt the existing object with adoptId.`,
      { cause: error },
    );
  }
  if (error instanceof ApiError) {
    return new Error(`${resource}: cannot ${action}: ${error.message}`, { cause: error });
  }
  return new Error(`${resource}: cannot ${action}: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}
