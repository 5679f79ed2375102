export type { Scope } from "../sdk/schemas";
export { ApiKey, type ApiKeyArgs } from "./apiKey";
export { IpAllocation, type IpAllocationArgs } from "./ipAllocation";
export { ProxyUser, type ProxyUserArgs, type TrafficLimits } from "./proxyUser";
