import type { Balance, BillingCharge } from "../../contract/billing";
import { LIST_LIMIT_MAX } from "../../contract/common";
import type { IpAllocation } from "../../contract/ips";
import type { ApiKey } from "../../contract/keys";
import type { ProxyUser } from "../../contract/proxyUsers";
import type { UsageReport } from "../../contract/usage";
import { PermissionDeniedError, type ProxyClient } from "../../sdk";
import { usageRange } from "./traffic";

/** A part of the account the key may not read: the report says so instead of failing. */
export interface Unreadable {
  unreadable: string;
}

/** What the report reads from the account: every list walked once at 200 a page, usage in one read. */
export interface AccountData {
  asOf: string;
  users: ProxyUser[] | Unreadable;
  keys: ApiKey[] | Unreadable;
  /** Only with --stack: coverage counts allocations too. */
  ips?: IpAllocation[] | Unreadable;
  /** This month's charges up to the report's day, newest first. */
  charges: BillingCharge[] | Unreadable;
  balance: Balance | Unreadable;
  usage: UsageReport | Unreadable;
  /** HTTP requests the reads took, retries included. */
  requests: number;
  /** List requests per collection, for the bound ⌈N/200⌉ + 1. */
  listRequests: Record<string, number>;
}

export const isReadable = <T>(part: T | Unreadable): part is T =>
  !(part !== null && typeof part === "object" && "unreadable" in part);

/** A 403 becomes a note naming the scope the key lacks; anything else fails the report. */
async function readable<T>(what: string, read: () => Promise<T>): Promise<T | Unreadable> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof PermissionDeniedError)) throw error;
    const scopes = error.requiredScopes;
    return { unreadable: `the key cannot read ${what}${scopes.length > 0 ? ` (needs ${scopes.join(", ")})` : ""}` };
  }
}

interface Listing<T> {
  pages(): AsyncGenerator<{ items: T[]; nextCursor: string | null }>;
}

/** Every item of a list, counting its requests; `until` stops the walk at the first item it rejects. */
async function walk<T>(
  listing: Listing<T>,
  count: (requests: number) => void,
  until?: (item: T) => boolean,
): Promise<T[]> {
  const items: T[] = [];
  let requests = 0;
  try {
    for await (const page of listing.pages()) {
      requests++;
      for (const item of page.items) {
        if (until && !until(item)) return items;
        items.push(item);
      }
    }
    return items;
  } finally {
    count(requests);
  }
}

/** Reads the account as of `asOf` (a UTC day): read-only, nothing is changed. */
export async function collectAccount(
  client: ProxyClient,
  asOf: string,
  options: { ips?: boolean } = {},
): Promise<AccountData> {
  const before = client.stats.requests;
  const listRequests: Record<string, number> = {};
  const counter = (name: string) => (requests: number) => {
    listRequests[name] = requests;
  };
  const page = { limit: LIST_LIMIT_MAX };
  const monthStart = `${asOf.slice(0, 7)}-01`;
  const dayAfter = `${asOf}T23:59:59.999Z`;
  const [users, keys, ips, charges, balance, usage] = await Promise.all([
    readable("proxy users", () => walk(client.proxyUsers.list(page), counter("proxyUsers"))),
    readable("API keys", () => walk(client.keys.list(page), counter("keys"))),
    options.ips ? readable("IP allocations", () => walk(client.ips.list(page), counter("ips"))) : undefined,
    // Newest first: the walk ends at the first charge from before the month.
    readable("billing", async () =>
      (
        await walk(client.billing.charges(page), counter("charges"), (charge) => charge.created_at >= monthStart)
      ).filter((charge) => charge.created_at <= dayAfter),
    ),
    readable("the balance", () => client.billing.balance()),
    readable("usage", () => client.usage.get({ ...usageRange(asOf), granularity: "day" })),
  ]);
  return {
    asOf,
    users,
    keys,
    ...(ips ? { ips } : {}),
    charges,
    balance,
    usage,
    requests: client.stats.requests - before,
    listRequests,
  };
}
