/**
 * When to retry, and how long to wait. Kept free of I/O so the policy can be tested on its own.
 *
 * Which methods are retried after an ambiguous failure (5xx, reset connection, timeout), where the
 * server may already have applied the request:
 * - GET: always; it changes nothing.
 * - DELETE: always; the end state is the same. A 404 on a retry after an ambiguous failure means
 *   our earlier attempt did the deletion, so it counts as success (see transport).
 * - POST: only with an idempotency key. The client sends one on every POST and keeps it across
 *   retries, so the server replays the first answer instead of acting twice.
 * - PATCH: always. Every PATCH body in this API sets fields to values (limits, enabled), so applying
 *   it twice gives the state of applying it once. The client also sends an idempotency key on PATCH,
 *   which a server may use for replay; the contract only promises that for POST.
 * A 429 is retried for every method: the server refused it before doing anything.
 *
 * How long: by time, not by count. A call keeps retrying for `retryWindowMs` after it began (and
 * within its deadline), so a write that is safe to repeat gets there under a fault rate that would
 * use up any small count: at 20 % faults, five failures in a row happen once in ~3 000 requests,
 * which a destroy of a few hundred resources meets. `maxRetries`, when set, caps the count as well.
 */

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

export function retriableAfterAmbiguousFailure(method: HttpMethod, hasIdempotencyKey: boolean): boolean {
  return method !== "POST" || hasIdempotencyKey;
}

export const RETRY_WINDOW_MS_DEFAULT = 120_000;

/**
 * The window for a refused connection before a client's first answer. A run whose first request
 * finds nothing listening was almost always given a wrong URL (a closed port, a typo): it fails in
 * seconds with the URL, instead of after the whole retry window. A server that restarts once the run
 * is under way has answered before, so the whole window applies to it.
 */
export const FIRST_CONTACT_WINDOW_MS_DEFAULT = 5_000;

/** The retry window of one failure: short for a refused connection while the API has never answered. */
export function windowFor(
  failure: { refused: boolean; everAnswered: boolean },
  windows: { retryWindowMs: number; firstContactWindowMs: number },
): number {
  if (!failure.refused || failure.everAnswered) return windows.retryWindowMs;
  return Math.min(windows.retryWindowMs, windows.firstContactWindowMs);
}

export interface RetryBudget {
  /** Retries made so far. */
  retries: number;
  /** When the call began (epoch ms). */
  startedAt: number;
  /** The wait before the next attempt. */
  delayMs: number;
  windowMs: number;
  maxRetries: number | undefined;
  deadline: number | undefined;
  now: number;
}

/** Whether one more attempt may be made: it must start within the window and before the deadline. */
export function mayRetry(budget: RetryBudget): boolean {
  if (budget.maxRetries !== undefined && budget.retries >= budget.maxRetries) return false;
  const nextAttemptAt = budget.now + budget.delayMs;
  if (budget.deadline !== undefined && nextAttemptAt >= budget.deadline) return false;
  return nextAttemptAt - budget.startedAt <= budget.windowMs;
}

export function isRetriableStatus(status: number): boolean {
  return status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
}

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  random?: () => number;
}

/** "Full jitter": uniform in [0, min(max, base·2^retry)), which keeps many retrying clients apart. */
export function backoffMs(retry: number, options: BackoffOptions): number {
  const random = options.random ?? Math.random;
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, retry));
  return Math.floor(random() * ceiling);
}

/**
 * A 429 waits what the server asked, capped, plus up to 10 % jitter (at least 50 ms) so that many
 * requests held by the same retry-after do not land in the same millisecond.
 */
export function rateLimitWaitMs(
  retryAfterSeconds: number | undefined,
  capMs: number,
  random: () => number = Math.random,
): number {
  const asked = retryAfterSeconds === undefined ? 1_000 : retryAfterSeconds * 1000;
  const base = Math.min(capMs, Math.max(0, asked));
  return Math.floor(base + random() * Math.max(50, base * 0.1));
}

/** `retry-after` as integer seconds or an HTTP date; undefined when absent or nonsense. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - now) / 1000);
}

/** A non-negative integer header, or undefined. */
export function parseIntHeader(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}
