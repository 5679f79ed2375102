import type * as d from "../core/descriptor";
import { proxyUser } from "../kinds/proxyUser/descriptor";
import { resourceClass } from "./resource";

export type { TrafficLimits } from "../kinds/proxyUser/schema";
export type ProxyUserArgs = d.ArgsOf<typeof proxyUser>;
/** A gateway login with traffic ceilings. The gateway password is a secret output. */
export const ProxyUser = resourceClass(proxyUser);
export type ProxyUser = InstanceType<typeof ProxyUser>;
