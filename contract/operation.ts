import type { z } from "zod";
import type { ErrorCode } from "./errors";
import type { Scope } from "./keys";

/** One row of the endpoint table (endpoints.ts), and the error codes that follow from it. */
export interface Endpoint {
  readonly operationId: string;
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** OpenAPI-style path, with `{param}` segments; each one is described in `pathParams`. */
  readonly path: string;
  readonly pathParams?: Readonly<Record<string, PathParam>>;
  readonly summary: string;
  /** Scopes always required. Conditional ones (for example limits:write when a body sets limits) are in `scopeNote`. */
  readonly scopes: readonly Scope[];
  readonly scopeNote?: string;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  readonly status: 200 | 201 | 204;
  readonly response?: z.ZodType;
  /** Codes only this operation answers; the ones every request or its shape can get are in `errorCodesOf`. */
  readonly errors?: readonly ErrorCode[];
}

/** A `{name}` path segment. */
export interface PathParam {
  readonly schema: z.ZodType<string>;
  readonly description: string;
  /**
   * The contract's answer to a segment of the wrong shape: an id that cannot exist is as unknown as
   * any other (404 naming `what`), while the `{ip}` segment names its mistake (400 with `issue`).
   */
  readonly malformed:
    | { readonly code: "not_found"; readonly what: string }
    | { readonly code: "invalid_request"; readonly issue: string };
}

/**
 * Every code an operation can answer: its own `errors`, plus what every request can get
 * (authentication, scopes, rate limit, server trouble) and what its shape implies (a body or query
 * to validate, a path segment to look up, an idempotent POST).
 */
export function errorCodesOf(endpoint: Endpoint): ErrorCode[] {
  const codes = new Set<ErrorCode>(["unauthenticated", "invalid_api_key", "insufficient_scope", "rate_limited"]);
  const readsBody = endpoint.method === "POST" || endpoint.method === "PATCH";
  const params = Object.values(endpoint.pathParams ?? {});
  if (endpoint.query || readsBody || params.some((p) => p.malformed.code === "invalid_request"))
    codes.add("invalid_request");
  if (params.length > 0) codes.add("not_found");
  if (endpoint.method === "POST") codes.add("idempotency_key_reused");
  if (readsBody) for (const code of ["payload_too_large", "unsupported_media_type"] as const) codes.add(code);
  for (const code of endpoint.errors ?? []) codes.add(code);
  for (const code of ["internal_error", "service_unavailable"] as const) codes.add(code);
  return [...codes];
}
