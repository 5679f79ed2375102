import { apiKey } from "./apiKey/descriptor";
import type { Descriptor } from "./descriptor";
import { ipAllocation } from "./ipAllocation/descriptor";
import { proxyUser } from "./proxyUser/descriptor";

/**
 * Every resource kind, once. The serialized stubs, the provider runtime, the native provider, the
 * plan and the drift command all find a kind here; a new kind is an entry in this list and a folder
 * of its own (see the README's Contributing section).
 */
export const KINDS = [proxyUser, apiKey, ipAllocation] as const;

export type ResourceKind = (typeof KINDS)[number]["kind"];

/**
 * The kind of a type token as any front-end spells it: `proxy:ProxyUser` (dynamic, as the plan
 * shortens it), `pulumi-nodejs:dynamic/proxy:ProxyUser` (the engine's), `proxy:index:ProxyUser` (native).
 */
export function kindOfType(type: string): Descriptor | undefined {
  const match = /^(?:pulumi-nodejs:dynamic\/)?proxy:(?:index:)?([A-Za-z]+)$/.exec(type);
  return KINDS.find((kind) => kind.type === match?.[1]) as Descriptor | undefined;
}
