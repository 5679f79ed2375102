import type * as d from "../core/descriptor";
import { ipAllocation } from "../kinds/ipAllocation/descriptor";
import { resourceClass } from "./resource";

export type IpAllocationArgs = d.ArgsOf<typeof ipAllocation>;
/** An allocated ISP or dedicated address. The resource id is the stable allocation id; `ip` may change. */
export const IpAllocation = resourceClass(ipAllocation);
export type IpAllocation = InstanceType<typeof IpAllocation>;
