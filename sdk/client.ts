import { inspect } from "node:util";
import { type ClientOptions, type RateLimitWindow, Transport, type TransportStats } from "./core/transport";
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
  /**
   * Lives in a private field behind a prototype getter: never an own property, so no enumeration,
   * JSON or inspect (even with showHidden) of a client can print it.
   */
  readonly #apiKey: string;
  get apiKey(): string {
    return this.#apiKey;
  }
  readonly baseUrl: string;
  readonly proxyUsers: ProxyUsers;
  readonly ips: Ips;
  readonly keys: Keys;
  readonly usage: Usage;
  readonly billing: Billing;
  /** Live counters: HTTP attempts, retries among them, and 429 answers. */
  readonly stats: Readonly<TransportStats>;
  readonly #transport: Transport;

  constructor(options: ClientOptions) {
    const transport = new Transport(options);
    this.#transport = transport;
    this.#apiKey = options.apiKey;
    this.baseUrl = transport.baseUrl;
    this.proxyUsers = new ProxyUsers(transport);
    this.ips = new Ips(transport);
    this.keys = new Keys(transport);
    this.usage = new Usage(transport);
    this.billing = new Billing(transport);
    this.stats = transport.stats;
  }

  /** The key's current rate-limit window as the answers describe it; undefined while unknown. */
  rateLimitWindow(): RateLimitWindow | undefined {
    return this.#transport.rateLimitWindow();
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, apiKey: "[redacted]" };
  }

  [inspect.custom](): string {
    return `ProxyClient { baseUrl: ${JSON.stringify(this.baseUrl)}, apiKey: [redacted], stats: ${inspect({ ...this.stats })} }`;
  }
}
