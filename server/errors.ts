/**
 * Every failure a handler or the pipeline can answer with. Handlers throw these; the pipeline turns
 * them into the contract's error body `{"error": {code, message, request_id, details?}}`.
 */
export type ErrorCode =
  | "unauthenticated"
  | "invalid_api_key"
  | "insufficient_scope"
  | "scope_escalation"
  | "rate_limited"
  | "invalid_request"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "no_capacity"
  | "charge_exceeds_limit"
  | "insufficient_funds"
  | "idempotency_key_reused"
  | "payload_too_large"
  | "unsupported_media_type"
  | "internal_error"
  | "service_unavailable";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export interface WireIssue {
  path: string;
  message: string;
}

export function invalidRequest(issues: WireIssue[], message?: string): ApiError {
  const first = issues[0];
  const summary = message ?? (first ? `Invalid request: ${first.path} ${first.message}.` : "Invalid request.");
  return new ApiError(400, "invalid_request", summary, { issues });
}

export function notFound(what: string): ApiError {
  return new ApiError(404, "not_found", `${what} was not found.`);
}

export function errorBody(code: string, message: string, requestId: string, details?: Record<string, unknown>): string {
  const error: Record<string, unknown> = { code, message, request_id: requestId };
  if (details !== undefined) error.details = details;
  return JSON.stringify({ error });
}
