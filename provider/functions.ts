import * as pulumi from "@pulumi/pulumi";
import {
  type Balance,
  type BillingCharge,
  type IpAllocation,
  isNotFound,
  type ProxyClient,
  type ProxyUser,
  type UsageReport,
} from "../sdk";
import { type Camelized, camelized } from "./camelized";
import { apiSettings, clientFor as newClient, settingsIdentity } from "./settings";
import { explain } from "./shared";

/**
 * Reads for a program: usage, balance, charges, and lookups of existing objects (to feed `adoptId`,
 * for example). Unlike the resources, these run in the program's own process, so they read the
 * stack config there: `proxy:apiUrl`, and `proxy:apiKey` as a secret, with PROXY_API_URL and
 * PROXY_API_KEY as the fallback, and the provider settings (settings.ts). The key taints nothing:
 * results are only as secret as the arguments.
 */

export interface UsageArgs {
  /** First day, `YYYY-MM-DD` (UTC), inclusive. */
  from: pulumi.Input<string>;
  /** Last day, `YYYY-MM-DD` (UTC), inclusive; at most 366 days after `from`. */
  to: pulumi.Input<string>;
  /** Only this proxy user (pu_…); default every proxy user of the account. */
  proxyUserId?: pulumi.Input<string>;
  /** One row per day (default) or per month. */
  granularity?: pulumi.Input<"day" | "month">;
}

/** One (proxy user, period) pair with traffic; `periodStart` is `YYYY-MM-DD`, a month row's the 1st. */
export type UsageRow = Camelized<UsageReport["usage"][number]>;

export interface UsageResult {
  /** Only (proxy user, period) pairs that carried traffic, by period, then by proxy user id. */
  rows: UsageRow[];
  totals: { bytes: number; requests: number };
}

export type BalanceResult = Camelized<Balance>;

export interface ChargesArgs {
  /** Only charges created at or after this instant (ISO 8601 date or timestamp); default all. */
  since?: pulumi.Input<string>;
}

export type Charge = Camelized<BillingCharge>;

export interface ChargesResult {
  /** Newest first. */
  charges: Charge[];
  totalCents: number;
}

export type ProxyUserLookup = Camelized<ProxyUser>;

export type IpAllocationLookup = Camelized<IpAllocation>;

/** Traffic for a period, optionally of one proxy user. Needs usage:read. */
export function getUsage(args: UsageArgs): pulumi.Output<UsageResult> {
  return read("getUsage", "read usage", args, async (client, { from, to, proxyUserId, granularity }) => {
    const report: UsageReport = await client.usage.get({
      from,
      to,
      ...(proxyUserId !== undefined ? { proxy_user_id: proxyUserId } : {}),
      ...(granularity !== undefined ? { granularity } : {}),
    });
    return { rows: camelized(report.usage), totals: { ...report.totals } };
  });
}

/** The account's balance. Needs billing:read. */
export function getBalance(): pulumi.Output<BalanceResult> {
  return read("getBalance", "read the balance", {}, async (client) => {
    return camelized(await client.billing.balance());
  });
}

/** The account's charges, newest first, optionally only those since an instant. Needs billing:read. */
export function getCharges(args: ChargesArgs = {}): pulumi.Output<ChargesResult> {
  return read("getCharges", "list charges", args, async (client, { since }) => {
    const from = since === undefined ? Number.NEGATIVE_INFINITY : Date.parse(since);
    if (Number.isNaN(from))
      throw new Error(`since must be an ISO 8601 date or timestamp, got ${JSON.stringify(since)}`);
    const charges: Charge[] = [];
    // Newest first: the walk stops at the first charge older than `since`.
    for await (const charge of client.billing.charges({ limit: 200 })) {
      if (Date.parse(charge.created_at) < from) break;
      charges.push(camelized(charge));
    }
    return { charges, totalCents: charges.reduce((sum, charge) => sum + charge.amountCents, 0) };
  });
}

/** An existing proxy user by name, for example to adopt it (`adoptId: user.id`). Needs proxy-users:read. */
export function lookupProxyUser(args: { name: pulumi.Input<string> }): pulumi.Output<ProxyUserLookup> {
  return read("lookupProxyUser", "look up a proxy user", args, async (client, { name }) => {
    for await (const user of client.proxyUsers.list({ limit: 200 })) {
      if (user.name === name) return camelized(user);
    }
    throw new Error(
      `no proxy user is named ${JSON.stringify(name)} on this account. Check the name, or create it with a ProxyUser resource.`,
    );
  });
}

/** An allocation by its current address (or its alloc_… id). Needs proxy-users:read. */
export function lookupIpAllocation(args: { address: pulumi.Input<string> }): pulumi.Output<IpAllocationLookup> {
  return read("lookupIpAllocation", "look up an allocation", args, async (client, { address }) => {
    try {
      return camelized(await client.ips.get(address));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      throw new Error(
        `the account holds no allocation at ${address}. Check the address, or allocate one with an IpAllocation resource.`,
      );
    }
  });
}

/**
 * Runs one read once its arguments are known. The result is exactly as secret as the arguments: the
 * API key is read from the raw config, not joined in as a secret Output, and the failure is a
 * RunError, which the run harness prints as its one-line message.
 *
 * The result is marked as observed (`observeFailure`): @pulumi/pulumi's run harness keeps a V8
 * debugger session enabled (runtime/closure/v8Hooks.js), and with a debugger enabled every rejection
 * makes V8 search the promises downstream for a catch handler (catch prediction). It walks every path
 * and memoizes nothing, and each Output fans a rejection into four promises (value, isKnown, isSecret,
 * resources) that the next Output joins again, so the paths multiply with each `apply`, `.id` and
 * `pulumi.output({...})`. When no promise downstream has a handler, as when a failed lookup's only
 * use is another read's argument (`getUsage({ proxyUserId: missing.id })`), the walk enumerates them
 * all, holding a V8 handle per step outside the JS heap: 21 GB in two minutes, before the harness
 * could print the error. A handler at the end of the chain ends every walk at the first path.
 */
function read<A extends object, R>(
  name: string,
  action: string,
  args: { [K in keyof A]: pulumi.Input<A[K]> },
  call: (client: ProxyClient, args: pulumi.Unwrap<A>) => Promise<R>,
): pulumi.Output<R> {
  const resolvedArgs = pulumi.output(args) as pulumi.Output<pulumi.Unwrap<A>>;
  const config = new pulumi.Config("proxy");
  const apiUrl = config.get("apiUrl") || process.env.PROXY_API_URL;
  const apiKey = pulumi.runtime.getConfig("proxy:apiKey") || process.env.PROXY_API_KEY;
  const result = resolvedArgs.apply(async (known) => {
    try {
      return await call(clientFor(apiUrl, apiKey), known as pulumi.Unwrap<A>);
    } catch (error) {
      // A RunError: the run harness prints its message alone. Any other error it renders with
      // util.inspect, which loops on the source-mapped frames of @pulumi/pulumi (node_modules/@pulumi/
      // output.ts: nodejs/node#64011), growing the program to gigabytes instead of printing it.
      throw new pulumi.RunError(explain(name, action, error).message);
    }
  }) as pulumi.Output<R>;
  observeFailure(result);
  return result;
}

/** The part of @pulumi/pulumi's Output (pinned) that its typings leave out: a fresh promise of the value. */
type OutputInternals = { promise?: () => Promise<unknown> };

/**
 * Gives V8's catch prediction a handler at the end of the chain (see `read`). Only a fresh promise of
 * the value is handled: the Output's own promises stay as they were, so a failure still reaches the
 * run harness through every other use, and through the Output's own promises when it has none.
 */
function observeFailure(result: pulumi.Output<unknown>): void {
  const promise = (result as unknown as OutputInternals).promise;
  if (typeof promise !== "function") {
    throw new Error(
      "pulumi-proxy: this @pulumi/pulumi has no Output.promise(); the provider needs the version it pins.",
    );
  }
  promise.call(result).catch(() => undefined);
}

let cached: { identity: string; client: ProxyClient } | undefined;

/** The program's client: the same settings as the resources' provider process, from the same stack config. */
function clientFor(apiUrl: string | undefined, apiKey: string | undefined): ProxyClient {
  const settings = apiSettings((key) =>
    key === "proxy:apiUrl" ? apiUrl : key === "proxy:apiKey" ? apiKey : pulumi.runtime.getConfig(key),
  );
  const identity = settingsIdentity(settings);
  if (cached?.identity !== identity) cached = { identity, client: newClient(settings, "pulumi-proxy-functions") };
  return cached.client;
}
