import { inspect } from "node:util";
import { Transport, type ClientOptions, type TransportStats } from "./core/transport";
import { Billing } from "./resources/billing";
import { Ips } from "./resources/ips";
import { Keys } from "./resources/keys";
import { ProxyUsers } from "./resources/proxyUsers";
import { Usage } from "./resources/usage";

/**
 * Typed client for the management API. One client is one API key and therefore one rate-limit
 * budget: share a client across the code that uses a key, so pacing sees every request.
 */
export class ProxyClient {
  /** Non-enumerable and left out of inspect/JSON, so logging a client never leaks it. */
  declare readonly apiKey: string;
  readonly baseUrl: string;
  readonly proxyUsers: ProxyUsers;
  readonly ips: Ips;
  readonly keys: Keys;
  readonly usage: Usage;
  readonly billing: Billing;
  /** Live counters: HTTP attempts, retries among them, and 429 answers. */
  readonly stats: Readonly<TransportStats>;

  constructor(options: ClientOptions) {
    const transport = new Transport(options);
    Object.defineProperty(this, "apiKey", { value: options.apiKey, enumerable: false, writable: false, configurable: false });
    this.baseUrl = transport.baseUrl;
    this.proxyUsers = new ProxyUsers(transport);
    this.ips = new Ips(transport);
    this.keys = new Keys(transport);
    this.usage = new Usage(transport);
    this.billing = new Billing(transport);
    this.stats = transport.stats;
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, apiKey: "[redacted]" };
  }

  [inspect.custom](): string {
    return `ProxyClient { baseUrl: ${JSON.stringify(this.baseUrl)}, apiKey: [redacted], stats: ${inspect({ ...this.stats })} }`;
  }
}
