/**
 * What serialized providers call in the provider process (see stubs.ts). Loaded lazily there, so the
 * SDK and its HTTP stack never enter the state or the program's closure.
 */
import { apiKeyHandler } from "./apiKey";
import type { Handler } from "./declaration";
import { ipAllocationHandler } from "./ipAllocation";
import { proxyUserHandler } from "./proxyUser";
import type { ResourceKind } from "./stubs";

export { configure } from "./context";

export const handlers: Record<ResourceKind, Handler> = {
  proxyUser: proxyUserHandler,
  apiKey: apiKeyHandler,
  ipAllocation: ipAllocationHandler,
};
