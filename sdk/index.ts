export { ProxyClient } from "./client";
export type { HttpMethod } from "./core/retry";
export type { ClientOptions, RequestOptions, TransportEvent, TransportStats, RateLimitInfo } from "./core/types";
export { PagePromise, type Page } from "./core/pagination";
export { resolvePath } from "./core/path";
export {
  ProxyError,
  ApiError,
  BadRequestError,
  AuthenticationError,
  PaymentRequiredError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  ServerError,
  ConnectionError,
  TimeoutError,
  RequestAbortedError,
  ResponseValidationError,
  isNotFound,
  type ValidationIssue,
} from "./core/errors";
export type { ProxyUserListQuery } from "./resources/proxyUsers";

export * as schemas from "./schemas";
export type {
  ProxyUser,
  CreatedProxyUser,
  CreateProxyUserBody,
  UpdateProxyUserBody,
  Limits,
  LimitsInput,
} from "./schemas/proxyUsers";
export type {
  IpAllocation,
  AllocateIpBody,
  ReplaceIpBody,
  ReplaceIpResult,
  ReplacementCharge,
  IpListQuery,
  IpProduct,
  IpHealth,
} from "./schemas/ips";
export type { ApiKey, ApiKeyWithSecret, CreateApiKeyBody, RotateApiKeyBody, Scope } from "./schemas/keys";
export type { UsageQuery, UsageReport } from "./schemas/usage";
export type { Balance, BillingCharge, TopUpBody } from "./schemas/billing";
export type { ListQuery } from "./schemas/common";
