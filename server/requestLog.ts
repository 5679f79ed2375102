import { redactPath } from "./logRedaction";

/** What the log knows of one request; the pipeline's exchange has these fields. */
export interface LoggedRequest {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly keyId: string | undefined;
}

/**
 * One finished request for the console: no body, no header. The path is as it arrived; the console
 * redacts it (as the log does) only for the few it sends, so watching costs the hot path nothing.
 */
export interface RequestRecord {
  /** Epoch milliseconds, by the process clock (the console shows wall time, not the emulated clock). */
  at: number;
  requestId: string;
  method: string;
  rawPath: string;
  outcome: string;
  ms: number;
  keyId: string | null;
}

/**
 * The API's request log: one line per request (request id, method, path, outcome, duration, key id)
 * and one per internal error. Never a secret: of a path only what the contract defines is shown.
 */
export class RequestLog {
  /** Told of every finished request (the console); set once the server starts. */
  observer: ((record: RequestRecord) => void) | undefined;

  constructor(private readonly log: ((line: string) => void) | undefined) {}

  /** When a request began; no clock is read when nobody logs or watches. */
  start(): number {
    return this.log || this.observer ? performance.now() : 0;
  }

  request(exchange: LoggedRequest, outcome: string, started: number): void {
    if (!this.log && !this.observer) return;
    const ms = performance.now() - started;
    this.log?.(
      `${exchange.requestId} ${exchange.method} ${redactPath(exchange.path)} ${outcome} ${ms.toFixed(1)}ms ${exchange.keyId ?? "-"}`,
    );
    this.observer?.({
      at: Date.now(),
      requestId: exchange.requestId,
      method: exchange.method,
      rawPath: exchange.path,
      outcome,
      ms: Math.round(ms * 10) / 10,
      keyId: exchange.keyId ?? null,
    });
  }

  internalError(requestId: string, error: unknown): void {
    this.log?.(
      `${requestId} internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
  }
}
