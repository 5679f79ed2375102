import { ERRORS, type ErrorCode, type GatewayErrorCode } from "../contract/errors";

/**
 * Every failure a handler or the pipeline can answer with. Handlers throw these; the pipeline turns
 * them into the contract's error body `{"error": {code, message, request_id, details?}}`. The code
 * is one of the table's `ErrorCode`s, and it fixes the status.
 */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERRORS[code].status;
  }
}

export interface WireIssue {
  path: string;
  message: string;
}

export function invalidRequest(issues: WireIssue[], message?: string): ApiError {
  const first = issues[0];
  const summary = message ?? (first ? `Invalid request: ${first.path} ${first.message}.` : "Invalid request.");
  return new ApiError("invalid_request", summary, { issues });
}

export function notFound(what: string): ApiError {
  return new ApiError("not_found", `${what} was not found.`);
}

/** The contract's error body, for the API and for the gateway's refusals alike. */
export function errorBody(
  code: ErrorCode | GatewayErrorCode,
  message: string,
  requestId: string,
  details?: Record<string, unknown>,
): string {
  const error: Record<string, unknown> = { code, message, request_id: requestId };
  if (details !== undefined) error.details = details;
  return JSON.stringify({ error });
}
