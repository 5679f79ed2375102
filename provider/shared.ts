import type * as pulumi from "@pulumi/pulumi";
import { ApiError, ConflictError, ErrorCode, isNotFound, PermissionDeniedError } from "../sdk";
import type { ReadCoalescer } from "./coalescer";

/** Equality for JSON-like property values; null and undefined both mean "not set". */
export function same(a: unknown, b: unknown): boolean {
  if (a == null || b == null) return a == null && b == null;
  if (typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => same((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/** The properties among `keys` whose new value differs from the old one. */
export function changed<K extends string>(
  olds: Partial<Record<K, unknown>>,
  news: Partial<Record<K, unknown>>,
  keys: readonly K[],
): K[] {
  return keys.filter((key) => !same(olds[key], news[key]));
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

/**
 * The end of every create: the object is read again (through the coalescer, so a burst of creates
 * shares list pages), and when that read fails the error keeps the id, so the engine records the
 * object instead of orphaning it.
 */
export async function readBackCreated<T extends { id: string }, S extends object>(
  resource: string,
  action: string,
  reads: ReadCoalescer<T>,
  created: T,
  toState: (object: T) => S,
): Promise<pulumi.dynamic.CreateResult<S>> {
  try {
    const found = await reads.read(created.id);
    if (!found) throw new Error(`${created.id} was not found right after it was written`);
    return { id: created.id, outs: toState(found) };
  } catch (error) {
    const message = explain(resource, `read it back after ${action}`, error).message;
    throw new PartialFailure(message, created.id, { ...toState(created) } as Record<string, unknown>);
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
