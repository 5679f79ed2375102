export type { Scope } from "../contract";
export { ApiKey, type ApiKeyArgs } from "./apiKey/index";
export { customerUsers, type FleetUser, fleetUsers } from "./fleetUsers";
export {
  type BalanceResult,
  type Charge,
  type ChargesArgs,
  type ChargesResult,
  type FunctionArgs,
  type FunctionResult,
  getBalance,
  getCharges,
  getIpAllocations,
  getProxyUsers,
  getUsage,
  type IpAllocationLookup,
  type IpAllocationsArgs,
  type IpAllocationsResult,
  lookupIpAllocation,
  lookupProxyUser,
  type ProxyUserLookup,
  type ProxyUsersArgs,
  type ProxyUsersResult,
  type ReadOptions,
  type UsageArgs,
  type UsageResult,
  type UsageRow,
} from "./functions";
export { IpAllocation, type IpAllocationArgs } from "./ipAllocation/index";
export { ProxyUser, type ProxyUserArgs, type TrafficLimits } from "./proxyUser/index";
