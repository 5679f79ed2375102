import { randomUUID } from "node:crypto";
import { type AttemptLink, sendAttempt } from "./attempt";
import { type ApiError, ConnectionError, errorFromResponse, ProxyError, redact, type TimeoutError } from "./errors";
import { Pacer, type RateGate } from "./pacer";
import {
  backoffMs,
  isRetriableStatus,
  mayRetry,
  parseRetryAfter,
  rateLimitWaitMs,
  retriableAfterAmbiguousFailure,
  windowFor,
} from "./retry";
import { CallScope } from "./scope";
import { Semaphore } from "./semaphore";
import type { Call, ClientOptions, RateLimitWindow, RequestOptions, TransportEvent, TransportStats } from "./types";
import { header, notify, parseAnswer, resolveOptions, type Settings, urlFor } from "./wire";

export type * from "./types";

/**
 * The one request pipeline: each attempt (slot → pacer → undici, in attempt.ts) is wrapped by the
 * retry loop here, which judges the answer: validate it, or wait (backoff, retry-after) and go again.
 * Every API area goes through `call`.
 */
export class Transport {
  readonly stats: TransportStats = { requests: 0, retries: 0, rateLimited: 0 };
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #options: Settings;
  readonly #logger: ((event: TransportEvent) => void) | undefined;
  readonly #onWriteDone: (() => void) | undefined;
  readonly #pacer: RateGate;
  readonly #link: AttemptLink;
  readonly #refusedKeyHint: string | undefined;
  /** Whether the API has answered any request of this client: see FIRST_CONTACT_WINDOW_MS_DEFAULT. */
  #everAnswered = false;

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
    this.#refusedKeyHint = options.refusedKeyHint;
    const reserve = options.rateLimitReserve ?? 0;
    if (!Number.isInteger(reserve) || reserve < 0) {
      throw new ProxyError(
        `rateLimitReserve must be a whole number of requests, 0 or more, got ${JSON.stringify(reserve)}`,
      );
    }
    this.#pacer = pacer ?? new Pacer({ reserve });
    this.#link = {
      apiKey: this.#apiKey,
      userAgent: this.#options.userAgent,
      semaphore: new Semaphore(options.maxConcurrency ?? 8),
      pacer: this.#options.pacing ? this.#pacer : undefined,
      dispatcher: options.dispatcher,
      stats: this.stats,
      emit: (event) => this.#emit(event),
    };
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
      const request = {
        ...this.#link,
        call,
        url: urlFor(this.baseUrl, call),
        body,
        idempotencyKey,
        timeoutMs: options.timeoutMs ?? this.#options.timeoutMs,
        scope,
        onSend: options.onSend,
      };
      let ambiguous = false;
      for (let attempt = 0; ; attempt++) {
        const outcome = await sendAttempt({ ...request, attempt });
        let error: ApiError | ConnectionError | TimeoutError;
        let delayMs: number;
        let rateLimited = false;
        if (outcome.kind === "answer") {
          this.#everAnswered = true;
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
            refusedKeyHint: this.#refusedKeyHint,
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
        // Before any answer, a refused connection gets the short first-contact window (retry.ts).
        const refused = outcome.kind === "network" && outcome.neverSent;
        const window = windowFor(
          { refused, everAnswered: this.#everAnswered },
          { retryWindowMs: windowMs, firstContactWindowMs: this.#options.firstContactWindowMs },
        );
        const budget = { retries: attempt, startedAt, delayMs, windowMs: window, maxRetries, now: Date.now() };
        if (!mayRetry({ ...budget, deadline: options.deadline })) {
          if (window === windowMs) throw error;
          const firstContact = `${error.message}; nothing has answered at ${this.baseUrl} since this client started`;
          throw new ConnectionError(firstContact, { cause: error });
        }
        this.#emit({ type: "retry", method, path, attempt, reason: error.message, delayMs });
        this.stats.retries += 1;
        const pacer = this.#link.pacer;
        if (rateLimited && pacer) {
          // Every request of this key is held, not only this one; the pacer does the waiting.
          pacer.rateLimited(delayMs);
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

  #backoff(attempt: number): number {
    return backoffMs(attempt, { baseMs: this.#options.retryBaseDelayMs, maxMs: this.#options.retryMaxDelayMs });
  }

  #emit(event: TransportEvent): void {
    if (this.#logger) notify(() => this.#logger?.(event));
  }
}
