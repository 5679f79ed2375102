export { ProxyClient } from "./client";
export {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  isNotFound,
  NotFoundError,
  PaymentRequiredError,
  PermissionDeniedError,
  ProxyError,
  RateLimitError,
  RequestAbortedError,
  ResponseValidationError,
  ServerError,
  TimeoutError,
  type ValidationIssue,
} from "./core/errors";
export { type Page, PagePromise } from "./core/pagination";
export { resolvePath } from "./core/path";
export type { HttpMethod } from "./core/retry";
export type {
  AnswerInfo,
  ClientOptions,
  RateLimitInfo,
  RateLimitWindow,
  RequestOptions,
  TransportEvent,
  TransportStats,
} from "./core/types";
export {
  FREE_REPLACEMENTS_PER_MONTH,
  formatDollars,
  proratedCents,
  quoteReplacement,
  type ReplacementQuote,
  remainingTermDays,
  TERM_DAYS,
  TERM_PRICE_CENTS,
} from "./pricing";
export type { ProxyUserListQuery } from "./resources/proxyUsers";
export * as schemas from "./schemas";
export type { Balance, BillingCharge, TopUpBody } from "./schemas/billing";
export type { ListQuery } from "./schemas/common";
export { ErrorCode, type WireErrorCode } from "./schemas/errors";
export type {
  AllocateIpBody,
  IpAllocation,
  IpHealth,
  IpListQuery,
  IpProduct,
  ReplaceIpBody,
  ReplaceIpResult,
  ReplacementCharge,
} from "./schemas/ips";
export type { ApiKey, ApiKeyWithSecret, CreateApiKeyBody, RotateApiKeyBody, Scope } from "./schemas/keys";
export type {
  CreatedProxyUser,
  CreateProxyUserBody,
  Limits,
  LimitsInput,
  ProxyUser,
  UpdateProxyUserBody,
} from "./schemas/proxyUsers";
export type { UsageQuery, UsageReport } from "./schemas/usage";
