/**
 * What serialized providers call in the provider process (see stubs.ts). Loaded lazily there, so the
 * SDK and its HTTP stack never enter the state or the program's closure.
 */
import type * as pulumi from "@pulumi/pulumi";
import { apiKeyHandler } from "./apiKey";
import { ipAllocationHandler } from "./ipAllocation";
import { proxyUserHandler } from "./proxyUser";
import type { ResourceKind } from "./stubs";

export { configure } from "./config";

export const handlers: Record<ResourceKind, Required<Omit<pulumi.dynamic.ResourceProvider, "configure">>> = {
  proxyUser: proxyUserHandler,
  apiKey: apiKeyHandler,
  ipAllocation: ipAllocationHandler,
};
