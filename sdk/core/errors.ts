import { ErrorBody } from "../../contract/common";
import type { WireErrorCode } from "../../contract/errors";

/** Base of everything the SDK throws, so callers can tell SDK failures from their own bugs. */
export class ProxyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface ApiErrorInit {
  status: number;
  code: WireErrorCode;
  message: string;
  requestId: string | undefined;
  details: Record<string, unknown> | undefined;
  method: string;
  path: string;
  /** The server's sentence when `message` was composed from details; defaults to `message`. */
  serverMessage?: string;
}

/** The server answered with an error body (or at least an error status). */
export class ApiError extends ProxyError {
  readonly status: number;
  /** One of `ErrorCode`, a code a newer API added, or `http_<status>` when the body was not the contract's. */
  readonly code: WireErrorCode;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly method: string;
  readonly path: string;
  /** The server's own sentence, without the method/path/status prefix. */
  readonly serverMessage: string;

  constructor(init: ApiErrorInit) {
    super(`${init.method} ${init.path}: ${init.status} ${init.code}: ${init.message}`);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details;
    this.method = init.method;
    this.path = init.path;
    this.serverMessage = init.serverMessage ?? init.message;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      status: this.status,
      code: this.code,
      requestId: this.requestId,
      details: this.details,
    };
  }
}

export interface ValidationIssue {
  path: string;
  message: string;
}

export class BadRequestError extends ApiError {
  /** `details.issues` of a 400, empty when the server gave none. */
  get issues(): ValidationIssue[] {
    return readIssues(this.details);
  }
}

export class AuthenticationError extends ApiError {}
export class PaymentRequiredError extends ApiError {}
export class PermissionDeniedError extends ApiError {
  get requiredScopes(): string[] {
    const raw = this.details?.required_scopes;
    return Array.isArray(raw) ? raw.filter((s): s is string => typeof s === "string") : [];
  }
}
export class NotFoundError extends ApiError {}
export class ConflictError extends ApiError {}
export class RateLimitError extends ApiError {
  /** The `retry-after` the server sent, in seconds; undefined when absent or unparsable. */
  readonly retryAfterSeconds: number | undefined;
  constructor(init: ApiErrorInit & { retryAfterSeconds: number | undefined }) {
    super(init);
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}
export class ServerError extends ApiError {}

/** The connection failed before a complete answer arrived (refused, reset, closed). */
export class ConnectionError extends ProxyError {}
/** An attempt ran past its timeout, or the call ran past its deadline. */
export class TimeoutError extends ProxyError {}
/** The caller's AbortSignal fired; `cause` is the signal's reason. */
export class RequestAbortedError extends ProxyError {}
/** The server answered 2xx but the body did not match the shared wire schema. */
export class ResponseValidationError extends ProxyError {
  readonly issues: ValidationIssue[];
  constructor(message: string, issues: ValidationIssue[]) {
    super(message);
    this.issues = issues;
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof NotFoundError;
}

/** Status classes the caller can branch on; anything else 4xx stays a plain ApiError. */
function classFor(status: number): typeof ApiError {
  switch (status) {
    case 400:
      return BadRequestError;
    case 401:
      return AuthenticationError;
    case 402:
      return PaymentRequiredError;
    case 403:
      return PermissionDeniedError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    default:
      return status >= 500 ? ServerError : ApiError;
  }
}

export interface ErrorResponse {
  method: string;
  path: string;
  status: number;
  text: string;
  requestId: string | undefined;
  retryAfterSeconds: number | undefined;
  /** Added to a 401's message: where the key came from and how to set another (never the key). */
  refusedKeyHint?: string | undefined;
}

/**
 * Builds the typed error from the contract's error body. Bodies that are not the contract's shape
 * (an HTML page from a load balancer, say) still give a usable error named after the status.
 */
export function errorFromResponse(res: ErrorResponse): ApiError {
  let code: WireErrorCode = `http_${res.status}`;
  let message = "the server gave no error body";
  let requestId = res.requestId;
  let details: Record<string, unknown> | undefined;
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(res.text));
    if (parsed.success) {
      ({ code, message } = parsed.data.error);
      requestId = parsed.data.error.request_id || requestId;
      details = parsed.data.error.details;
    }
  } catch {
    // Not JSON: keep the status-derived code.
  }
  // A 400 reads best as the field and what is wrong with it, as the server listed them.
  const issues = res.status === 400 ? readIssues(details) : [];
  const described = issues.length > 0 ? describeIssues(issues) : message;
  const shown = res.status === 401 && res.refusedKeyHint ? `${described} ${res.refusedKeyHint}` : described;
  const init: ApiErrorInit = {
    status: res.status,
    code,
    message: shown,
    requestId,
    details,
    method: res.method,
    path: res.path,
    serverMessage: message,
  };
  if (res.status === 429) return new RateLimitError({ ...init, retryAfterSeconds: res.retryAfterSeconds });
  const Cls = classFor(res.status);
  return new Cls(init);
}

function readIssues(details: Record<string, unknown> | undefined): ValidationIssue[] {
  const raw = details?.issues;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((issue: unknown) => {
    if (typeof issue !== "object" || issue === null) return [];
    const { path, message } = issue as Record<string, unknown>;
    return typeof path === "string" && typeof message === "string" ? [{ path, message }] : [];
  });
}

function describeIssues(issues: ValidationIssue[]): string {
  const shown = issues.slice(0, 3).map((i) => `${i.path}: ${i.message}`);
  if (issues.length > 3) shown.push(`and ${issues.length - 3} more`);
  return shown.join("; ");
}

/** Replaces every occurrence of a secret in a string; used on anything the server echoes back. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join("[redacted]");
  return out;
}
