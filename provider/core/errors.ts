import {
  ApiError,
  ConflictError,
  ConnectionError,
  ErrorCode,
  isNotFound,
  PermissionDeniedError,
  TimeoutError,
} from "../../sdk";

/**
 * How the provider words and classifies the API's failures: a message a user can act on, a partial
 * failure that keeps the id, a 404 that means "gone".
 */

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

/**
 * Looks up the id of the object that holds a name the API refused as taken, so the conflict message can
 * offer it for adoptId.
 */
export interface ExistingByName {
  name: string;
  list: () => AsyncIterable<{ id: string; name: string }>;
  /** The fix to offer instead of the general one (another name, or adoptId), given the holder's id when found. */
  advice?: (existingId: string | undefined) => string;
}

/** Awaits an API call and, when it fails, rethrows the failure rewritten by `explain`. */
export async function explained<T>(
  resource: string,
  action: string,
  call: Promise<T>,
  existing?: ExistingByName,
): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (!existing || !isNameConflict(error)) throw explain(resource, action, error);
    const holder = await findByName(existing);
    if (!existing.advice) throw explain(resource, action, error, holder);
    const said = `${resource}: cannot ${action}: ${(error as ConflictError).serverMessage} ${existing.advice(holder)}`;
    throw new ExplainedError(said, { cause: error });
  }
}

/** The API refused a name another object holds (409 `conflict`). */
export function isNameConflict(error: unknown): boolean {
  return error instanceof ConflictError && error.code === ErrorCode.enum.conflict;
}

async function findByName({ name, list }: ExistingByName): Promise<string | undefined> {
  try {
    for await (const item of list()) if (item.name === name) return item.id;
  } catch {
    // The lookup only improves the message; the conflict is the error to report.
  }
  return undefined;
}

/**
 * An error already worded for the user. The dynamic-provider host prints `${error}: ${error.stack}` to
 * the engine for read and delete failures; this keeps that to one line instead of a stack trace.
 */
export class ExplainedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "pulumi-proxy";
    this.stack = message;
  }

  override toString(): string {
    return this.name;
  }
}

function scopesOf(error: PermissionDeniedError, key: string): string[] {
  const raw = error.details?.[key];
  return Array.isArray(raw) ? raw.filter((scope): scope is string => typeof scope === "string") : [];
}

/** A timed-out attempt's message names its method first (sdk/core/attempt.ts); these change state. */
const WRITE_SENT = /^(POST|PATCH|PUT|DELETE) /;

/**
 * Rewrites an SDK error into one a user can act on: which resource, what went wrong, and the fix.
 * SDK errors never carry a credential, so the message is safe to show. `existingId` is the object
 * that holds a refused name, when the caller could find it.
 */
export function explain(resource: string, action: string, error: unknown, existingId?: string): Error {
  if (error instanceof ExplainedError || error instanceof PartialFailure) return error;
  const cannot = `${resource}: cannot ${action}`;
  const say = (message: string) => new ExplainedError(`${cannot}: ${message}`, { cause: error });
  if (error instanceof PermissionDeniedError && error.code === ErrorCode.enum.scope_escalation) {
    const scopes = scopesOf(error, "escalating_scopes").join(", ") || "scopes it does not hold";
    return say(
      `the new key would get ${scopes}, which the API key in proxy:apiKey does not hold, and a key can only hand out scopes it holds. ` +
        `Use a key that holds ${scopes}, or remove ${scopes} from scopes.`,
    );
  }
  if (error instanceof PermissionDeniedError) {
    const missing = scopesOf(error, "missing_scopes");
    const scopes = (missing.length > 0 ? missing : error.requiredScopes).join(", ") || "a scope this operation needs";
    return say(`the API key in proxy:apiKey lacks ${scopes}. Use a key that has ${scopes}.`);
  }
  if (isNameConflict(error)) {
    const adopt = existingId
      ? `Choose another name, or adopt the existing object: set adoptId: "${existingId}".`
      : "Choose another name, or adopt the existing object with adoptId.";
    return say(`${(error as ConflictError).serverMessage} ${adopt}`);
  }
  if (isNotFound(error) && /^adopt\b/.test(action)) {
    return say(
      "the API has no such object; it may have been deleted outside Pulumi. Remove adoptId to create a new one, or set it to an object that exists.",
    );
  }
  if (error instanceof TimeoutError && WRITE_SENT.test(error.message)) {
    // The request went out and no answer came back: the API may have done it, as a frozen server does.
    return say(
      `the API took the write but did not answer (${error.message}), so it may have landed. Run \`pulumi up\` again once the API answers: ` +
        "it sends the write again under the same idempotency key, so the API finishes it once, with no duplicate and no second charge.",
    );
  }
  if (error instanceof ConnectionError || error instanceof TimeoutError) {
    return say(
      `the API did not answer (${error.message}). Check that proxy:apiUrl (or PROXY_API_URL) names the service and that it is up; proxy:retryWindowSeconds sets how long each request is tried first.`,
    );
  }
  if (error instanceof ApiError) return say(error.message);
  return say(error instanceof Error ? error.message : String(error));
}
