export { ProxyUser, type ProxyUserArgs, type TrafficLimits } from "./proxyUser";
export { ApiKey, type ApiKeyArgs } from "./apiKey";
export { IpAllocation, type IpAllocationArgs } from "./ipAllocation";
export type { Scope } from "../sdk/schemas";
