/**
 * What serialized providers call in the provider process (see stubs.ts). Loaded lazily there, so the
 * SDK and its HTTP stack never enter the state or the program's closure.
 */
import { ProxyError } from "../sdk";
import { apiKeyHandler } from "./apiKey";
import type { Handler } from "./declaration";
import { ipAllocationHandler } from "./ipAllocation";
import { proxyUserHandler } from "./proxyUser";
import { explain } from "./shared";
import type { ResourceKind } from "./stubs";

export { configure } from "./context";

const VERBS: Record<keyof Handler, string> = {
  check: "check its inputs",
  diff: "compare it with its state",
  create: "create it",
  read: "refresh it",
  update: "update it",
  delete: "delete it",
};

/** `ProxyUser "scraper"`, from whichever of the call's property bags names the object. */
function labelOf(type: string, args: unknown[]): string {
  for (const arg of args) {
    const props = arg as { name?: unknown; ip?: unknown } | undefined;
    if (typeof props?.name === "string") return `${type} "${props.name}"`;
    if (typeof props?.ip === "string") return `${type} ${props.ip}`;
  }
  return typeof args[0] === "string" ? `${type} ${args[0]}` : type;
}

/**
 * Every failure leaves the provider worded by `explain`: it names the resource and the fix, and it is
 * one line where the host would otherwise print a stack trace (a refresh with the API down, say).
 */
function explainFailures(type: string, handler: Handler): Handler {
  const wrapped = {} as Record<keyof Handler, (...args: unknown[]) => Promise<unknown>>;
  for (const method of Object.keys(VERBS) as (keyof Handler)[]) {
    const call = handler[method] as (...args: unknown[]) => Promise<unknown>;
    wrapped[method] = async (...args) => {
      try {
        return await call.apply(handler, args);
      } catch (error) {
        // The resources word their own errors; an SDK error that got past them is worded here.
        if (!(error instanceof ProxyError)) throw error;
        throw explain(labelOf(type, args), VERBS[method], error);
      }
    };
  }
  return wrapped as unknown as Handler;
}

export const handlers: Record<ResourceKind, Handler> = {
  proxyUser: explainFailures("ProxyUser", proxyUserHandler),
  apiKey: explainFailures("ApiKey", apiKeyHandler),
  ipAllocation: explainFailures("IpAllocation", ipAllocationHandler),
};
