export type { Scope } from "../contract";
export { ApiKey, type ApiKeyArgs } from "./dynamic/apiKey";
export { IpAllocation, type IpAllocationArgs } from "./dynamic/ipAllocation";
export { ProxyUser, type ProxyUserArgs, type TrafficLimits } from "./dynamic/proxyUser";
export { customerUsers, type FleetUser, fleetUsers } from "./program/fleetUsers";
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
} from "./program/functions";
