/**
 * The reference server: a faithful, in-memory emulation of the proxy service's management API, for
 * the SDK and provider tests, the demo and the benchmarks. Published as `pulumi-proxy/testing`.
 */
export { ManualClock, type Clock } from "./clock";
export type { FaultOptions, InjectedFault } from "./faults";
export type { ServerControl } from "./control";
export type { Stats } from "./app";
export { startReferenceServer, type ReferenceServer, type ReferenceServerOptions } from "./server";
export { PLACES, TERM_PRICE_CENTS, FREE_REPLACEMENTS_PER_MONTH, type Place } from "./pool";
export { BODY_LIMIT_BYTES } from "./http";
export { IDEMPOTENCY_TTL_MS } from "./idempotency";
