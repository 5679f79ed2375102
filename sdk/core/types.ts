import type { Dispatcher } from "undici";
import type { z } from "zod";
import type { HttpMethod } from "./retry";

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Per attempt, default 30 000. */
  timeoutMs?: number;
  /**
   * How long after a call began a failure that is safe to repeat is still retried; default 120 000.
   * Retries end by time, not count.
   */
  retryWindowMs?: number;
  /** An extra cap on the number of retries; default none (the window decides). */
  maxRetries?: number;
  /** In-flight requests per client, default 8. */
  maxConcurrency?: number;
  /** Cap for a 429's retry-after wait, default 60 000. */
  retryAfterCapMs?: number;
  /** Proactive pacing from x-ratelimit-* headers, default true. */
  pacing?: boolean;
  /**
   * Requests per rate-limit window this client leaves unspent for other users of the same key,
   * default 0. With pacing, the client stops when the window's remaining budget reaches it.
   */
  rateLimitReserve?: number;
  userAgent?: string;
  /**
   * Called each time a call that may change the account (any method but GET) has finished, however it
   * ended, before its caller resumes. Counting these tells a cache which answers may predate a write.
   * A throwing hook does not break the call.
   */
  onWriteDone?: () => void;
  /** Debug hook; events never carry the key, a secret or a body. */
  logger?: (event: TransportEvent) => void;
  dispatcher?: Dispatcher;
  /** First backoff ceiling after a 5xx, reset or timeout, default 500; doubles per retry. */
  retryBaseDelayMs?: number;
  /** Largest backoff ceiling, default 8 000. */
  retryMaxDelayMs?: number;
  /**
   * How long a refused connection is retried until this client has had its first answer, default
   * 5 000: before any answer, nothing listening at the URL means a wrong URL far more often than a
   * restart. Once the API has answered, `retryWindowMs` applies, so a restart is waited for.
   */
  firstContactWindowMs?: number;
  /**
   * Added to the error when the API refuses the key (401): where the key came from and how to set
   * another, for callers that know (the provider names its config key). Never put the key in it.
   */
  refusedKeyHint?: string;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Per attempt; overrides the client's timeoutMs. */
  timeoutMs?: number;
  /** Epoch ms after which the call fails with TimeoutError, retries and queueing included. */
  deadline?: number;
  /** Sent on POST and PATCH; generated when absent. Reuse it to retry a call yourself safely. */
  idempotencyKey?: string;
  /** Overrides the client's retryWindowMs. */
  retryWindowMs?: number;
  /** Overrides the client's maxRetries. */
  maxRetries?: number;
  /**
   * Called each time this request goes on the wire (once per attempt, after queueing and pacing), so a
   * caller can tell which of its requests an answer may reflect. A throwing hook does not break the call.
   */
  onSend?: () => void;
  /**
   * Called with the answer this call returns. `replayed`: the API answered with its record of an
   * earlier request under the same idempotency key (this call's own lost attempt, or another run's up
   * to 24 hours ago), so what it describes may have changed since. A throwing hook does not break the call.
   */
  onAnswer?: (answer: AnswerInfo) => void;
}

export interface AnswerInfo {
  replayed: boolean;
}

export interface RateLimitInfo {
  limit: number | undefined;
  remaining: number;
  resetSeconds: number;
}

/** The client's picture of the key's current rate-limit window. */
export interface RateLimitWindow {
  limit: number | undefined;
  /** Lowest remaining reported in the window, before requests in flight. */
  remaining: number;
  /** Local epoch ms by which the window has certainly ended. */
  endsAt: number;
}

interface EventBase {
  method: HttpMethod;
  path: string;
  attempt: number;
}
export type TransportEvent =
  | (EventBase & { type: "request"; idempotencyKey: string | undefined })
  | (EventBase & {
      type: "response";
      status: number;
      durationMs: number;
      requestId: string | undefined;
      rateLimit: RateLimitInfo | undefined;
      replayed: boolean;
    })
  | (EventBase & { type: "network_error"; kind: "connection" | "timeout"; durationMs: number; message: string })
  | (EventBase & { type: "retry"; reason: string; delayMs: number })
  | (EventBase & { type: "deleted_on_earlier_attempt" });

export interface TransportStats {
  /** HTTP attempts sent. */
  requests: number;
  /** Attempts that were retries of an earlier one. */
  retries: number;
  /** 429 answers received. */
  rateLimited: number;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface Call<T> {
  method: HttpMethod;
  /** Already encoded, starting with /v1. */
  path: string;
  query?: Record<string, QueryValue> | undefined;
  body?: unknown;
  /** Omitted for 204 answers. */
  schema?: z.ZodType<T>;
}
