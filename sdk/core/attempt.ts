import type { Dispatcher } from "undici";
import { ConnectionError, ProxyError, TimeoutError } from "./errors";
import type { RateGate } from "./pacer";
import type { CallScope } from "./scope";
import type { Semaphore } from "./semaphore";
import type { Call, TransportEvent, TransportStats } from "./types";
import { describeCause, header, isConnectRefused, notify, type ResponseHeaders, rateLimitInfo } from "./wire";

/**
 * One HTTP exchange: slot → pacer → undici → body read, with the pacer told what the answer said of
 * the rate limit. It never retries and never judges a status: the retry loop in transport.ts wraps it.
 */

type Undici = typeof import("undici");
let loadedUndici: Undici | undefined;

/**
 * undici, loaded at the first request instead of with the SDK. Every Pulumi program that declares
 * one of our resources loads the SDK and never sends a request: undici's own load is about 60 ms of
 * CPU there, a third of the whole package's. (A provider process sends at least the run's
 * credentials check, so it loads undici then.)
 */
function undici(): Undici {
  loadedUndici ??= require("undici") as Undici;
  return loadedUndici;
}

/** What one attempt came back with: an answer of any status, or no answer at all. */
export type AttemptOutcome =
  | { kind: "answer"; status: number; headers: ResponseHeaders; text: string }
  | { kind: "network"; error: ConnectionError | TimeoutError; neverSent: boolean };

/** What every attempt of one transport shares. */
export interface AttemptLink {
  apiKey: string;
  userAgent: string;
  /** The concurrency slots; an attempt holds one from before pacing until its answer is read. */
  semaphore: Semaphore;
  /** Absent when pacing is off. */
  pacer: RateGate | undefined;
  dispatcher: Dispatcher | undefined;
  stats: TransportStats;
  emit: (event: TransportEvent) => void;
}

export interface AttemptOptions extends AttemptLink {
  call: Call<unknown>;
  url: string;
  body: string | undefined;
  /** Sent as `idempotency-key`; the same on every attempt of a call. */
  idempotencyKey: string | undefined;
  /** 0 for the first attempt of a call. */
  attempt: number;
  timeoutMs: number;
  /** The call's signal and deadline; when it fires, the attempt throws its reason. */
  scope: CallScope;
  onSend: (() => void) | undefined;
}

/** Sends one attempt; throws only the scope's reason or a ProxyError, and a failed connection is an outcome. */
export async function sendAttempt(options: AttemptOptions): Promise<AttemptOutcome> {
  const { call, scope, pacer, attempt, timeoutMs, idempotencyKey } = options;
  const { method, path } = call;
  const release = await scope.guard(options.semaphore.acquire(scope.signal));
  // The pacer's turn this attempt holds until the answer is told to it; a lost answer gives it back.
  let pacedBy: RateGate | undefined;
  const attemptAbort = new AbortController();
  const onCallAbort = () => attemptAbort.abort(scope.signal.reason);
  scope.signal.addEventListener("abort", onCallAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  let started = 0;
  try {
    if (pacer) {
      await scope.guard(pacer.acquire(scope.signal));
      pacedBy = pacer;
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.apiKey}`,
      accept: "application/json",
      "user-agent": options.userAgent,
    };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
    timer = setTimeout(
      () => attemptAbort.abort(new TimeoutError(`${method} ${path}: no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    options.stats.requests += 1;
    options.emit({ type: "request", method, path, attempt, idempotencyKey });
    notify(options.onSend);
    started = Date.now();
    const res = await undici().request(options.url, {
      method,
      headers,
      body: options.body,
      signal: attemptAbort.signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    const text = await res.body.text();
    const rateLimit = rateLimitInfo(res.headers);
    if (pacedBy) {
      if (rateLimit) pacedBy.observe({ ...rateLimit, receivedAt: Date.now() });
      else pacedBy.unpaced();
      pacedBy = undefined;
    }
    options.emit({
      type: "response",
      method,
      path,
      attempt,
      status: res.statusCode,
      durationMs: Date.now() - started,
      requestId: header(res.headers, "x-request-id"),
      rateLimit,
      replayed: header(res.headers, "idempotent-replayed") === "true",
    });
    return { kind: "answer", status: res.statusCode, headers: res.headers, text };
  } catch (cause) {
    if (scope.signal.aborted) throw scope.signal.reason;
    // undici rejects with the abort's reason, a TimeoutError, which is a ProxyError too: the timeout
    // must be seen first, or a timed-out attempt is thrown instead of retried.
    const timedOut = attemptAbort.signal.aborted;
    if (cause instanceof ProxyError && !timedOut) throw cause;
    const neverSent = !timedOut && isConnectRefused(cause);
    const error = timedOut
      ? (attemptAbort.signal.reason as TimeoutError)
      : new ConnectionError(`${method} ${path}: connection failed (${describeCause(cause)})`, { cause });
    options.emit({
      type: "network_error",
      method,
      path,
      attempt,
      kind: timedOut ? "timeout" : "connection",
      durationMs: Date.now() - started,
      message: error.message,
    });
    return { kind: "network", error, neverSent };
  } finally {
    pacedBy?.lost();
    clearTimeout(timer);
    scope.signal.removeEventListener("abort", onCallAbort);
    release();
  }
}
