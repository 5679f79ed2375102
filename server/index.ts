/**
 * The reference server: a faithful, in-memory emulation of the proxy service's management API, for
 * the SDK and provider tests, the demo and the benchmarks. Published as `pulumi-proxy/testing`.
 */

export { FREE_REPLACEMENTS_PER_MONTH, TERM_PRICE_CENTS } from "../contract/pricing";
export type { Stats } from "./app";
export { type Clock, ManualClock, ShiftedClock } from "./clock";
export type { ServerControl } from "./control";
export type { FaultOptions, InjectedFault } from "./faults";
export { BODY_LIMIT_BYTES } from "./http";
export { IDEMPOTENCY_TTL_MS } from "./idempotency";
export { PLACES, type Place } from "./pool";
export { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from "./server";
