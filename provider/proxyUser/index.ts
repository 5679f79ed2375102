import type * as d from "../descriptor";
import { resourceClass } from "../dynamic";
import { proxyUser } from "./descriptor";

export type { TrafficLimits } from "./schema";
export type ProxyUserArgs = d.ArgsOf<typeof proxyUser>;
/** A gateway login with traffic ceilings. The gateway password is a secret output. */
export const ProxyUser = resourceClass(proxyUser);
export type ProxyUser = InstanceType<typeof ProxyUser>;
