import type * as pulumi from "@pulumi/pulumi";
import { ProxyClient } from "../sdk";
import { noteRequestSent } from "./reads";

/**
 * Credentials live only in the provider process: `configure` receives the stack config there, and
 * the environment is the fallback. Nothing here is ever captured into the serialized provider.
 */
interface Credentials {
  apiUrl?: string;
  apiKey?: string;
}

let fromConfig: Credentials = {};
let client: ProxyClient | undefined;
let clientFor: string | undefined;

export function configure(request: pulumi.dynamic.ConfigureRequest): void {
  fromConfig = { apiUrl: request.config.get("proxy:apiUrl"), apiKey: request.config.get("proxy:apiKey") };
}

/** One client per provider process, shared by every resource, so pacing sees every request of the key. */
export function apiClient(): ProxyClient {
  const apiUrl = fromConfig.apiUrl || process.env.PROXY_API_URL;
  const apiKey = fromConfig.apiKey || process.env.PROXY_API_KEY;
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
  const identity = `${apiUrl}\u0000${apiKey}`;
  if (!client || clientFor !== identity) {
    // The hook tells coalesced reads when a list page actually went out (see reads.ts).
    const created: ProxyClient = new ProxyClient({
      baseUrl: apiUrl,
      apiKey,
      userAgent: "pulumi-proxy-provider",
      logger: (event) => noteRequestSent(created, event),
    });
    client = created;
    clientFor = identity;
  }
  return client;
}
