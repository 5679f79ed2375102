import { randomUUID } from "node:crypto";
import { type Dispatcher, request } from "undici";
import { type ApiError, ConnectionError, errorFromResponse, ProxyError, redact, TimeoutError } from "./errors";
import { Pacer, type RateGate } from "./pacer";
import {
  backoffMs,
  isRetriableStatus,
  mayRetry,
  parseRetryAfter,
  rateLimitWaitMs,
  retriableAfterAmbiguousFailure,
} from "./retry";
import { CallScope } from "./scope";
import { Semaphore } from "./semaphore";
import type { Call, ClientOptions, RateLimitWindow, RequestOptions, TransportEvent, TransportStats } from "./types";
import {
  describeCause,
  header,
  isConnectRefused,
  notify,
  parseAnswer,
  type ResponseHeaders,
  rateLimitInfo,
  resolveOptions,
  type Settings,
  urlFor,
} from "./wire";

export type * from "./types";

type Attempt =
  | { kind: "answer"; status: number; headers: ResponseHeaders; text: string }
  | { kind: "network"; error: ConnectionError | TimeoutError; neverSent: boolean };

/**
 * The one request pipeline: concurrency slot → pacer → undici → validate, with retries around it.
 * Every API area goes through `call`.
 */
export class Transport {
  readonly stats: TransportStats = { requests: 0, retries: 0, rateLimited: 0 };
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #options: Settings;
  readonly #logger: ((event: TransportEvent) => void) | undefined;
  readonly #onWriteDone: (() => void) | undefined;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #semaphore: Semaphore;
  readonly #pacer: RateGate;

  /** `pacer` replaces the built-in schedule; only the bench uses it, to compare schedules. */
  constructor(options: ClientOptions, pacer?: RateGate) {
    if (typeof options.apiKey !== "string" || options.apiKey.length === 0) throw new ProxyError("apiKey is required");
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new ProxyError(`baseUrl is not a URL: ${JSON.stringify(options.baseUrl)}`);
    }
    this.baseUrl = url.origin + url.pathname.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.#options = resolveOptions(options);
    this.#logger = options.logger;
    this.#onWriteDone = options.onWriteDone;
    this.#dispatcher = options.dispatcher;
    this.#semaphore = new Semaphore(options.maxConcurrency ?? 8);
    const reserve = options.rateLimitReserve ?? 0;
    if (!Number.isInteger(reserve) || reserve < 0) {
      throw new ProxyError(
        `rateLimitReserve must be a whole number of requests, 0 or more, got ${JSON.stringify(reserve)}`,
      );
    }
    this.#pacer = pacer ?? new Pacer({ reserve });
  }

  /** The pacer's view of the rate-limit window, for diagnostics. */
  get rateLimitState(): RateGate["state"] {
    return this.#pacer.state;
  }

  /** The current window as the answers describe it; undefined until one does, or once it has ended. */
  rateLimitWindow(now = Date.now()): RateLimitWindow | undefined {
    const { known, limit, remaining, windowEndsAt } = this.#pacer.state;
    if (!known || now >= windowEndsAt) return undefined;
    return { limit, remaining, endsAt: windowEndsAt };
  }

  async call<T>(call: Call<T>, options: RequestOptions = {}): Promise<T> {
    const { method, path } = call;
    const idempotencyKey =
      method === "POST" || method === "PATCH" ? (options.idempotencyKey ?? randomUUID()) : undefined;
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const maxRetries = options.maxRetries ?? this.#options.maxRetries;
    const windowMs = options.retryWindowMs ?? this.#options.retryWindowMs;
    const startedAt = Date.now();
    const scope = new CallScope(method, path, options);
    try {
      let ambiguous = false;
      for (let attempt = 0; ; attempt++) {
        const outcome = await this.#attempt(
          call,
          body,
          idempotencyKey,
          attempt,
          options.timeoutMs ?? this.#options.timeoutMs,
          scope,
          options.onSend,
        );
        let error: ApiError | ConnectionError | TimeoutError;
        let delayMs: number;
        let rateLimited = false;
        if (outcome.kind === "answer") {
          const { status, headers, text } = outcome;
          if (status >= 200 && status < 300) {
            const parsed = parseAnswer(call, text, [this.#apiKey]);
            notify(() => options.onAnswer?.({ replayed: header(headers, "idempotent-replayed") === "true" }));
            return parsed;
          }
          if (status === 404 && method === "DELETE" && ambiguous) {
            this.#emit({ type: "deleted_on_earlier_attempt", method, path, attempt });
            return undefined as T;
          }
          const retryAfter = parseRetryAfter(header(headers, "retry-after"));
          error = errorFromResponse({
            method,
            path,
            status,
            text: redact(text, [this.#apiKey]),
            requestId: header(headers, "x-request-id"),
            retryAfterSeconds: retryAfter,
          });
          if (status === 429) {
            this.stats.rateLimited += 1;
            rateLimited = true;
            delayMs = rateLimitWaitMs(retryAfter, this.#options.retryAfterCapMs);
          } else if (
            isRetriableStatus(status) &&
            retriableAfterAmbiguousFailure(method, idempotencyKey !== undefined)
          ) {
            ambiguous = true;
            const asked = retryAfter === undefined ? 0 : Math.min(retryAfter * 1000, this.#options.retryAfterCapMs);
            delayMs = Math.max(asked, this.#backoff(attempt));
          } else {
            throw error;
          }
        } else {
          error = outcome.error;
          if (!outcome.neverSent) {
            if (!retriableAfterAmbiguousFailure(method, idempotencyKey !== undefined)) throw error;
            ambiguous = true;
          }
          delayMs = this.#backoff(attempt);
        }
        const budget = { retries: attempt, startedAt, delayMs, windowMs, maxRetries, now: Date.now() };
        if (!mayRetry({ ...budget, deadline: options.deadline })) throw error;
        this.#emit({ type: "retry", method, path, attempt, reason: error.message, delayMs });
        this.stats.retries += 1;
        if (rateLimited && this.#options.pacing) {
          // Every request of this key is held, not only this one; the pacer does the waiting.
          this.#pacer.rateLimited(delayMs);
        } else {
          await scope.sleep(delayMs);
        }
      }
    } finally {
      scope.dispose();
      // Failed and abandoned writes count too: the server may have acted on them.
      if (method !== "GET") notify(this.#onWriteDone);
    }
  }

  async #attempt(
    call: Call<unknown>,
    body: string | undefined,
    idempotencyKey: string | undefined,
    attempt: number,
    timeoutMs: number,
    scope: CallScope,
    onSend: (() => void) | undefined,
  ): Promise<Attempt> {
    const { method, path } = call;
    const release = await scope.guard(this.#semaphore.acquire(scope.signal));
    let paced = false;
    const attemptAbort = new AbortController();
    const onCallAbort = () => attemptAbort.abort(scope.signal.reason);
    scope.signal.addEventListener("abort", onCallAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let started = 0;
    try {
      if (this.#options.pacing) await scope.guard(this.#pacer.acquire(scope.signal));
      paced = this.#options.pacing;
      const headers: Record<string, string> = {
        authorization: `Bearer ${this.#apiKey}`,
        accept: "application/json",
        "user-agent": this.#options.userAgent,
      };
      if (body !== undefined) headers["content-type"] = "application/json";
      if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
      timer = setTimeout(
        () => attemptAbort.abort(new TimeoutError(`${method} ${path}: no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.stats.requests += 1;
      this.#emit({ type: "request", method, path, attempt, idempotencyKey });
      notify(onSend);
      started = Date.now();
      const res = await request(urlFor(this.baseUrl, call), {
        method,
        headers,
        body,
        signal: attemptAbort.signal,
        ...(this.#dispatcher ? { dispatcher: this.#dispatcher } : {}),
      });
      const text = await res.body.text();
      const rateLimit = rateLimitInfo(res.headers);
      if (paced) {
        if (rateLimit) this.#pacer.observe({ ...rateLimit, receivedAt: Date.now() });
        else this.#pacer.unpaced();
        paced = false;
      }
      this.#emit({
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
      if (cause instanceof ProxyError) throw cause;
      const timedOut = attemptAbort.signal.aborted;
      const neverSent = !timedOut && isConnectRefused(cause);
      const error = timedOut
        ? (attemptAbort.signal.reason as TimeoutError)
        : new ConnectionError(`${method} ${path}: connection failed (${describeCause(cause)})`, { cause });
      this.#emit({
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
      if (paced) this.#pacer.lost();
      clearTimeout(timer);
      scope.signal.removeEventListener("abort", onCallAbort);
      release();
    }
  }

  #backoff(attempt: number): number {
    return backoffMs(attempt, { baseMs: this.#options.retryBaseDelayMs, maxMs: this.#options.retryMaxDelayMs });
  }

  #emit(event: TransportEvent): void {
    if (this.#logger) notify(() => this.#logger?.(event));
  }
}
