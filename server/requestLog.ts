import { redactPath } from "./logRedaction";

/** What the log knows of one request; the pipeline's exchange has these fields. */
export interface LoggedRequest {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly keyId: string | undefined;
}

/**
 * The API's request log: one line per request (request id, method, path, outcome, duration, key id)
 * and one per internal error. Never a secret: of a path only what the contract defines is shown.
 */
export class RequestLog {
  constructor(private readonly log: ((line: string) => void) | undefined) {}

  /** When a request began; no clock is read when nobody logs. */
  start(): number {
    return this.log ? performance.now() : 0;
  }

  request(exchange: LoggedRequest, outcome: string, started: number): void {
    if (this.log) {
      const ms = (performance.now() - started).toFixed(1);
      this.log(
        `${exchange.requestId} ${exchange.method} ${redactPath(exchange.path)} ${outcome} ${ms}ms ${exchange.keyId ?? "-"}`,
      );
    }
  }

  internalError(requestId: string, error: unknown): void {
    this.log?.(
      `${requestId} internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
  }
}
