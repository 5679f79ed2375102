import type * as pulumi from "@pulumi/pulumi";
import { LIST_LIMIT_MAX } from "../contract/common";
import { type ApiKey, type IpAllocation, ProxyClient, type ProxyUser } from "../sdk";
import { ReadCoalescer } from "./coalescer";
import { providerSettings, SETTING_KEYS } from "./settings";

/**
 * What every resource method of one provider process shares: one client, so pacing sees every
 * request of the key, and one set of coalesced reads, so one walk of a list answers every resource.
 *
 * Credentials live only in the provider process: `configure` receives the stack config there, and
 * the environment is the fallback. Nothing here is ever captured into the serialized provider.
 */
export interface ProviderContext {
  client: ProxyClient;
  reads: Reads;
}

export interface Reads {
  proxyUser: ReadCoalescer<ProxyUser>;
  apiKey: ReadCoalescer<ApiKey>;
  ipAllocation: ReadCoalescer<IpAllocation>;
}

/** The stack config the provider reads, by full key (`proxy:apiUrl`). */
let fromConfig: Record<string, string | undefined> = {};
let current: { identity: string; context: ProviderContext } | undefined;

export function configure(request: pulumi.dynamic.ConfigureRequest): void {
  const keys = ["proxy:apiUrl", "proxy:apiKey", ...SETTING_KEYS];
  fromConfig = Object.fromEntries(keys.map((key) => [key, request.config.get(key)]));
}

/** The context for the configured credentials, made on first use (a method that needs no API never fails). */
export function providerContext(): ProviderContext {
  const apiUrl = fromConfig["proxy:apiUrl"] || process.env.PROXY_API_URL;
  const apiKey = fromConfig["proxy:apiKey"] || process.env.PROXY_API_KEY;
  if (!apiUrl) {
    throw new Error(
      "pulumi-proxy: no API URL is configured. Run `pulumi config set proxy:apiUrl https://…` or set PROXY_API_URL.",
    );
  }
  if (!apiKey) {
    throw new Error(
      "pulumi-proxy: no API key is configured. Run `pulumi config set --secret proxy:apiKey live_…` or set PROXY_API_KEY.",
    );
  }
  const { rateLimitReserve, retryWindowSeconds } = providerSettings((key) => fromConfig[key]);
  const identity = [apiUrl, apiKey, rateLimitReserve, retryWindowSeconds].join("\u0000");
  if (current?.identity !== identity) {
    // Every write of every resource goes through this client, so counting its finished writes here is
    // the one place that tells the coalescers which list pages may predate a write (see coalescer.ts).
    let writesDone = 0;
    const client = new ProxyClient({
      baseUrl: apiUrl,
      apiKey,
      userAgent: "pulumi-proxy-provider",
      rateLimitReserve,
      retryWindowMs: retryWindowSeconds * 1000,
      onWriteDone: () => {
        writesDone += 1;
      },
    });
    current = { identity, context: { client, reads: coalescedReads(client, () => writesDone) } };
  }
  return current.context;
}

/** Each coalescer walks its collection with full pages, and learns from the SDK when a page went out. */
function coalescedReads(client: ProxyClient, writesDone: () => number): Reads {
  const limit = LIST_LIMIT_MAX;
  return {
    proxyUser: new ReadCoalescer(
      {
        page: (cursor, onSend) => client.proxyUsers.list({ limit, cursor }, { onSend }),
        get: (id) => client.proxyUsers.get(id),
      },
      writesDone,
    ),
    apiKey: new ReadCoalescer(
      { page: (cursor, onSend) => client.keys.list({ limit, cursor }, { onSend }), get: (id) => client.keys.get(id) },
      writesDone,
    ),
    ipAllocation: new ReadCoalescer(
      { page: (cursor, onSend) => client.ips.list({ limit, cursor }, { onSend }), get: (id) => client.ips.get(id) },
      writesDone,
    ),
  };
}
