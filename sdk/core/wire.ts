import { ResponseValidationError, redact } from "./errors";
import { FIRST_CONTACT_WINDOW_MS_DEFAULT, parseIntHeader, RETRY_WINDOW_MS_DEFAULT } from "./retry";
import type { Call, ClientOptions, RateLimitInfo } from "./types";

/**
 * What the pipeline (transport.ts, attempt.ts) needs to know of HTTP itself: the client's settings
 * with their defaults, the URL of a call, the headers it reads, and the check of an answer against
 * its schema. Kept apart so those hold only the order of things: slot, pacer, request, retry.
 */

const VERSION = "0.1.0";

export type Settings = Required<
  Pick<
    ClientOptions,
    | "timeoutMs"
    | "retryWindowMs"
    | "firstContactWindowMs"
    | "retryAfterCapMs"
    | "pacing"
    | "userAgent"
    | "retryBaseDelayMs"
    | "retryMaxDelayMs"
  >
> &
  Pick<ClientOptions, "maxRetries">;

/** How long one attempt waits for its answer, unless the client or the call says otherwise. */
export const ATTEMPT_TIMEOUT_MS_DEFAULT = 30_000;

export function resolveOptions(options: ClientOptions): Settings {
  return {
    timeoutMs: options.timeoutMs ?? ATTEMPT_TIMEOUT_MS_DEFAULT,
    retryWindowMs: options.retryWindowMs ?? RETRY_WINDOW_MS_DEFAULT,
    firstContactWindowMs: options.firstContactWindowMs ?? FIRST_CONTACT_WINDOW_MS_DEFAULT,
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    retryAfterCapMs: options.retryAfterCapMs ?? 60_000,
    pacing: options.pacing ?? true,
    userAgent: options.userAgent ?? `pulumi-proxy-sdk/${VERSION} node/${process.version}`,
    retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
    retryMaxDelayMs: options.retryMaxDelayMs ?? 8_000,
  };
}

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export function header(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function urlFor(baseUrl: string, call: Call<unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(call.query ?? {})) {
    if (value !== undefined && value !== null) params.append(name, String(value));
  }
  const qs = params.toString();
  return `${baseUrl}${call.path}${qs ? `?${qs}` : ""}`;
}

export function rateLimitInfo(headers: ResponseHeaders): RateLimitInfo | undefined {
  const remaining = parseIntHeader(header(headers, "x-ratelimit-remaining"));
  const resetSeconds = parseIntHeader(header(headers, "x-ratelimit-reset"));
  if (remaining === undefined || resetSeconds === undefined) return undefined;
  return { limit: parseIntHeader(header(headers, "x-ratelimit-limit")), remaining, resetSeconds };
}

/** The answer's body as the call's schema types it; a mismatch never echoes the body, nor any of `secrets`. */
export function parseAnswer<T>(call: Call<T>, text: string, secrets: string[]): T {
  if (!call.schema) return undefined as T;
  const where = `${call.method} ${call.path}`;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ResponseValidationError(`${where}: the answer is not JSON`, []);
  }
  const parsed = call.schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({
    path: i.path.map(String).join(".") || "(body)",
    message: redact(i.message, secrets),
  }));
  const summary = issues
    .slice(0, 3)
    .map((i) => `${i.path}: ${i.message}`)
    .join("; ");
  throw new ResponseValidationError(`${where}: the answer does not match the schema (${summary})`, issues);
}

/** Calls a caller's hook; a broken hook must not break the call. */
export function notify(hook: (() => void) | undefined): void {
  try {
    hook?.();
  } catch {
    // Ignored on purpose: the hook is the caller's bookkeeping, not part of the request.
  }
}

export function isConnectRefused(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "ECONNREFUSED";
}

/** `ECONNRESET: socket hang up`, for a ConnectionError's message. */
export function describeCause(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === "string" ? `${code}: ${message}` : message;
}
