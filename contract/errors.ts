import { z } from "zod";

/**
 * Every `error.code` the management API answers, once. The reference server throws only these, the
 * SDK types `ApiError.code` with them, the provider compares against `ErrorCode.enum.*`, and the
 * OpenAPI document lists them per operation (see `errorCodesOf` in endpoints.ts).
 */
export const ErrorCode = z.enum([
  "invalid_request",
  "unauthenticated",
  "invalid_api_key",
  "insufficient_funds",
  "insufficient_scope",
  "scope_escalation",
  "not_found",
  "method_not_allowed",
  "conflict",
  "no_capacity",
  "charge_exceeds_limit",
  "idempotency_key_reused",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "internal_error",
  "service_unavailable",
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

/**
 * What a client accepts in `error.code`: a known code, or any other string. The contract says a
 * client must accept what a newer service adds, so an unknown code parses and is kept verbatim
 * (callers see it in `ApiError.code` and in the message) instead of turning an error into a
 * schema failure. The SDK also puts `http_<status>` there when the body is not the contract's shape.
 */
export const WireErrorCode = z.union([ErrorCode, z.string()]);
export type WireErrorCode = ErrorCode | (string & {});

/** The one HTTP status of each code, and what it means; the server and the OpenAPI document read both. */
export const ERRORS: { readonly [C in ErrorCode]: { readonly status: number; readonly meaning: string } } = {
  invalid_request: {
    status: 400,
    meaning: "`details.issues` lists `{path, message}` per problem; an unknown field is named.",
  },
  unauthenticated: { status: 401, meaning: "no authorization header, or a malformed one." },
  invalid_api_key: { status: 401, meaning: "the secret is unknown, revoked or expired." },
  insufficient_funds: { status: 402, meaning: "the balance does not cover the charge. Nothing changes." },
  insufficient_scope: { status: 403, meaning: "`details.required_scopes` lists what the request needs." },
  scope_escalation: { status: 403, meaning: "the new key would hold a scope the caller lacks." },
  not_found: { status: 404, meaning: "no such object on this account." },
  method_not_allowed: { status: 405, meaning: "the path exists; the `allow` header lists its methods." },
  conflict: { status: 409, meaning: "the name is taken." },
  no_capacity: { status: 409, meaning: "no free address in that place." },
  charge_exceeds_limit: {
    status: 409,
    meaning: "the charge is above `max_charge_cents` (`details.charge_cents` says how much). Nothing changes.",
  },
  idempotency_key_reused: { status: 409, meaning: "the idempotency key was used with a different request." },
  payload_too_large: { status: 413, meaning: "the body is over 64 KiB." },
  unsupported_media_type: { status: 415, meaning: "a body that is not application/json." },
  rate_limited: { status: 429, meaning: "wait `retry-after` seconds." },
  internal_error: { status: 500, meaning: "retry the request." },
  service_unavailable: { status: 503, meaning: "retry the request, after `retry-after` when given." },
};

/**
 * Every reason the reference server's proxy gateway refuses a request, once: its `x-proxy-error`
 * header and its body's `error.code`. The gateway is not the management API, so these live apart
 * from ErrorCode (`rate_limited` has the same meaning on both).
 */
export const GatewayErrorCode = z.enum([
  "bad_request",
  "invalid_credentials",
  "proxy_user_disabled",
  "traffic_limit_reached",
  "rate_limited",
  "target_not_allowed",
  "target_unreachable",
]);
export type GatewayErrorCode = z.infer<typeof GatewayErrorCode>;

export const GATEWAY_ERRORS: {
  readonly [C in GatewayErrorCode]: { readonly status: number; readonly meaning: string };
} = {
  bad_request: { status: 400, meaning: "not an absolute-form http:// request, nor CONNECT host:port." },
  invalid_credentials: { status: 407, meaning: "missing, malformed or wrong proxy credentials, or no such user." },
  proxy_user_disabled: { status: 407, meaning: "the proxy user is disabled." },
  traffic_limit_reached: { status: 407, meaning: "today's or this month's traffic has reached its ceiling." },
  rate_limited: { status: 429, meaning: "past the proxy user's new requests per second; wait `retry-after`." },
  target_not_allowed: { status: 403, meaning: "the target is neither loopback nor an allowed host." },
  target_unreachable: { status: 502, meaning: "the target could not be reached." },
};
