import type { Descriptor } from "../core/descriptor";
import { getBalance } from "../functions/getBalance";
import { getCharges } from "../functions/getCharges";
import { getIpAllocations } from "../functions/getIpAllocations";
import { getProxyUsers } from "../functions/getProxyUsers";
import { getUsage } from "../functions/getUsage";
import { lookupIpAllocation } from "../functions/lookupIpAllocation";
import { lookupProxyUser } from "../functions/lookupProxyUser";
import { apiKey } from "./apiKey/descriptor";
import { ipAllocation } from "./ipAllocation/descriptor";
import { proxyUser } from "./proxyUser/descriptor";

/**
 * Every resource kind, once. The serialized stubs, the provider runtime, the native provider, the
 * plan and the drift command all find a kind here; a new kind is an entry in this list and a folder
 * of its own (see CONTRIBUTING.md, "Adding a resource kind").
 */
export const KINDS = [proxyUser, apiKey, ipAllocation] as const;

/**
 * Every function (a read a program makes), once: the native provider serves each through `Invoke`,
 * the schema and so every generated SDK lists it, and the Node functions wrap it. A new function is
 * a file in provider/functions/ and an entry here.
 */
export const FUNCTIONS = [
  getUsage,
  getBalance,
  getCharges,
  lookupProxyUser,
  lookupIpAllocation,
  getProxyUsers,
  getIpAllocations,
] as const;

export type ResourceKind = (typeof KINDS)[number]["kind"];

/**
 * The kind of a type token as any front-end spells it: `proxy:ProxyUser` (dynamic, as the plan
 * shortens it), `pulumi-nodejs:dynamic/proxy:ProxyUser` (the engine's), `proxy:index:ProxyUser` (native).
 */
export function kindOfType(type: string): Descriptor | undefined {
  const match = /^(?:pulumi-nodejs:dynamic\/)?proxy:(?:index:)?([A-Za-z]+)$/.exec(type);
  return KINDS.find((kind) => kind.type === match?.[1]) as Descriptor | undefined;
}
