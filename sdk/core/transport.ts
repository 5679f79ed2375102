import { randomUUID } from "node:crypto";
import { type Dispatcher, request } from "undici";
import {
  type ApiError,
  ConnectionError,
  errorFromResponse,
  ProxyError,
  ResponseValidationError,
  redact,
  TimeoutError,
} from "./errors";
import { Pacer, type RateGate } from "./pacer";
import {
  backoffMs,
  isRetriableStatus,
  mayRetry,
  parseIntHeader,
  parseRetryAfter,
  RETRY_WINDOW_MS_DEFAULT,
  rateLimitWaitMs,
  retriableAfterAmbiguousFailure,
} from "./retry";
import { CallScope } from "./scope";
import { Semaphore } from "./semaphore";
import type {
  Call,
  ClientOptions,
  RateLimitInfo,
  RateLimitWindow,
  RequestOptions,
  TransportEvent,
  TransportStats,
} from "./types";

export type * from "./types";

type Attempt =
  | { kind: "answer"; status: number; headers: Record<string, string | string[] | undefined>; text: string }
  | { kind: "network"; error: ConnectionError | TimeoutError; neverSent: boolean };

const VERSION = "0.1.0";

/**
 * The one request pipeline: concurrency slot → pacer → undici → validate, with retries around it.
 * Every API area goes through `call`.
 */
export class Transport {
  readonly stats: TransportStats = { requests: 0, retries: 0, rateLimited: 0 };
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #options: Required<
    Pick<
      ClientOptions,
      | "timeoutMs"
      | "retryWindowMs"
      | "retryAfterCapMs"
      | "pacing"
      | "userAgent"
      | "retryBaseDelayMs"
      | "retryMaxDelayMs"
    >
  > &
    Pick<ClientOptions, "maxRetries">;
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
    this.#options = {
      timeoutMs: options.timeoutMs ?? 30_000,
      retryWindowMs: options.retryWindowMs ?? RETRY_WINDOW_MS_DEFAULT,
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      retryAfterCapMs: options.retryAfterCapMs ?? 60_000,
      pacing: options.pacing ?? true,
      userAgent: options.userAgent ?? `pulumi-proxy-sdk/${VERSION} node/${process.version}`,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
      retryMaxDelayMs: options.retryMaxDelayMs ?? 8_000,
    };
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
            const parsed = this.#parse(call, text);
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
      const res = await request(this.#url(call), {
        method,
        headers,
        body,
        signal: attemptAbort.signal,
        ...(this.#dispatcher ? { dispatcher: this.#dispatcher } : {}),
      });
      const text = await res.body.text();
      const rateLimit = this.#rateLimitInfo(res.headers);
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
        : new ConnectionError(`${method} ${path}: connection failed (${describe(cause)})`, { cause });
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

  #parse<T>(call: Call<T>, text: string): T {
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
      message: redact(i.message, [this.#apiKey]),
    }));
    const summary = issues
      .slice(0, 3)
      .map((i) => `${i.path}: ${i.message}`)
      .join("; ");
    throw new ResponseValidationError(`${where}: the answer does not match the schema (${summary})`, issues);
  }

  #url(call: Call<unknown>): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined && value !== null) params.append(name, String(value));
    }
    const qs = params.toString();
    return `${this.baseUrl}${call.path}${qs ? `?${qs}` : ""}`;
  }

  #rateLimitInfo(headers: Record<string, string | string[] | undefined>): RateLimitInfo | undefined {
    const remaining = parseIntHeader(header(headers, "x-ratelimit-remaining"));
    const resetSeconds = parseIntHeader(header(headers, "x-ratelimit-reset"));
    if (remaining === undefined || resetSeconds === undefined) return undefined;
    return { limit: parseIntHeader(header(headers, "x-ratelimit-limit")), remaining, resetSeconds };
  }

  #backoff(attempt: number): number {
    return backoffMs(attempt, { baseMs: this.#options.retryBaseDelayMs, maxMs: this.#options.retryMaxDelayMs });
  }

  #emit(event: TransportEvent): void {
    if (this.#logger) notify(() => this.#logger?.(event));
  }
}

function notify(hook: (() => void) | undefined): void {
  try {
    hook?.();
  } catch {
    // A broken hook must not break the call.
  }
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function isConnectRefused(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "ECONNREFUSED";
}

function describe(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === "string" ? `${code}: ${message}` : message;
}
