export * as schemas from "../contract";
export type { Balance, BillingCharge, TopUpBody } from "../contract/billing";
export type { ListQuery } from "../contract/common";
export { ErrorCode, type WireErrorCode } from "../contract/errors";
export type {
  AllocateIpBody,
  IpAllocation,
  IpHealth,
  IpListQuery,
  IpProduct,
  ReplaceIpBody,
  ReplaceIpResult,
  ReplacementCharge,
} from "../contract/ips";
export type { ApiKey, ApiKeyWithSecret, CreateApiKeyBody, RotateApiKeyBody, Scope } from "../contract/keys";
export {
  FREE_REPLACEMENTS_PER_MONTH,
  formatDollars,
  proratedCents,
  quoteReplacement,
  type ReplacementQuote,
  remainingTermDays,
  TERM_DAYS,
  TERM_PRICE_CENTS,
} from "../contract/pricing";
export type {
  CreatedProxyUser,
  CreateProxyUserBody,
  Limits,
  LimitsInput,
  ProxyUser,
  UpdateProxyUserBody,
} from "../contract/proxyUsers";
export type { UsageQuery, UsageReport } from "../contract/usage";
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
export type { ProxyUserListQuery } from "./resources/proxyUsers";
