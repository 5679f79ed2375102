import * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import type { ProxyClient } from "../../sdk";
import { apiSettings, type ConfigKey, clientFor as newClient, settingsIdentity } from "../core/settings";
import { accountOf, type FunctionDescriptor, invokeFunction } from "../functions/descriptor";
import { getBalance as balanceRead } from "../functions/getBalance";
import { getCharges as chargesRead } from "../functions/getCharges";
import { getIpAllocations as allocationsRead } from "../functions/getIpAllocations";
import { getProxyUsers as proxyUsersRead } from "../functions/getProxyUsers";
import { getUsage as usageRead } from "../functions/getUsage";
import { lookupIpAllocation as allocationLookup } from "../functions/lookupIpAllocation";
import { lookupProxyUser as proxyUserLookup } from "../functions/lookupProxyUser";

/**
 * The functions (provider/functions/, the same descriptors the native provider serves) for a Node
 * program using the dynamic resources, which have no plugin: they run in the program's own process,
 * so they read the stack config there: `proxy:apiUrl`, and `proxy:apiKey` as a secret, with
 * PROXY_API_URL and PROXY_API_KEY as the fallback, and the provider settings (settings.ts), unless
 * the call is given credentials of its own. The key taints nothing: results are only as secret as
 * the arguments.
 */

type Fields<F extends FunctionDescriptor, P extends "inputs" | "outputs"> = z.ZodObject<F[P]>;
/** A function's arguments as a program passes them: each a value, a promise or an output. */
export type FunctionArgs<F extends FunctionDescriptor> = {
  [K in keyof z.input<Fields<F, "inputs">>]: pulumi.Input<z.input<Fields<F, "inputs">>[K]>;
};
export type FunctionResult<F extends FunctionDescriptor> = z.output<Fields<F, "outputs">>;

/** Credentials for one call, as an explicit provider would hold them; each left out falls back to the stack's. */
export interface ReadOptions {
  apiUrl?: pulumi.Input<string>;
  /** Pass it as a secret (`config.requireSecret`); the result is not made secret by it. */
  apiKey?: pulumi.Input<string>;
}

export type UsageArgs = FunctionArgs<typeof usageRead>;
export type UsageResult = FunctionResult<typeof usageRead>;
/** One (proxy user, period) pair with traffic; `periodStart` is `YYYY-MM-DD`, a month row's the 1st. */
export type UsageRow = UsageResult["rows"][number];
export type BalanceResult = FunctionResult<typeof balanceRead>;
export type ChargesArgs = FunctionArgs<typeof chargesRead>;
export type ChargesResult = FunctionResult<typeof chargesRead>;
export type Charge = ChargesResult["charges"][number];
export type ProxyUserLookup = FunctionResult<typeof proxyUserLookup>;
export type IpAllocationLookup = FunctionResult<typeof allocationLookup>;
export type ProxyUsersArgs = FunctionArgs<typeof proxyUsersRead>;
export type ProxyUsersResult = FunctionResult<typeof proxyUsersRead>;
export type IpAllocationsArgs = FunctionArgs<typeof allocationsRead>;
export type IpAllocationsResult = FunctionResult<typeof allocationsRead>;

/** Traffic for a period, optionally of one proxy user. Needs usage:read. */
export const getUsage = (args: UsageArgs, opts?: ReadOptions) => read(usageRead, args, opts);
/** The account's balance. Needs billing:read. */
export const getBalance = (opts?: ReadOptions) => read(balanceRead, {}, opts);
/** The account's charges, newest first, optionally only those since an instant. Needs billing:read. */
export const getCharges = (args: ChargesArgs = {}, opts?: ReadOptions) => read(chargesRead, args, opts);
/** An existing proxy user by name, for example to adopt it (`adoptId: user.id`). Needs proxy-users:read. */
export const lookupProxyUser = (args: FunctionArgs<typeof proxyUserLookup>, opts?: ReadOptions) =>
  read(proxyUserLookup, args, opts);
/** An allocation by its current address (or its alloc_… id). Needs proxy-users:read. */
export const lookupIpAllocation = (args: FunctionArgs<typeof allocationLookup>, opts?: ReadOptions) =>
  read(allocationLookup, args, opts);
/** Every proxy user the key sees, optionally only the enabled or disabled ones. Needs proxy-users:read. */
export const getProxyUsers = (args: ProxyUsersArgs = {}, opts?: ReadOptions) => read(proxyUsersRead, args, opts);
/** Every allocation the key sees, optionally of one product, country or city. Needs proxy-users:read. */
export const getIpAllocations = (args: IpAllocationsArgs = {}, opts?: ReadOptions) => read(allocationsRead, args, opts);

/**
 * Runs one read once its arguments are known. The result is exactly as secret as the arguments: the
 * API key is read from the raw config (or unwrapped from its secret), not joined in as a secret
 * Output, and the failure is a RunError, which the run harness prints as its one-line message.
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
function read<F extends FunctionDescriptor>(
  descriptor: F,
  args: FunctionArgs<F>,
  opts: ReadOptions = {},
): pulumi.Output<FunctionResult<F>> {
  const credentials = pulumi.unsecret(pulumi.output({ apiUrl: opts.apiUrl, apiKey: opts.apiKey }));
  const config = new pulumi.Config("proxy");
  const stack = { apiUrl: config.get("apiUrl"), apiKey: pulumi.runtime.getConfig("proxy:apiKey") };
  const result = pulumi.all([pulumi.output(args), credentials]).apply(async ([known, given]) => {
    const apiUrl = given.apiUrl || stack.apiUrl;
    const apiKey = given.apiKey || stack.apiKey;
    try {
      return await invokeFunction(descriptor, () => session(apiUrl, apiKey), known as Record<string, unknown>);
    } catch (error) {
      // A RunError: the run harness prints its message alone. Any other error it renders with
      // util.inspect, which loops on the source-mapped frames of @pulumi/pulumi (node_modules/@pulumi/
      // output.ts: nodejs/node#64011), growing the program to gigabytes instead of printing it.
      throw new pulumi.RunError((error as Error).message);
    }
  }) as pulumi.Output<FunctionResult<F>>;
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
function session(apiUrl: string | undefined, apiKey: string | undefined) {
  const given: Partial<Record<ConfigKey, string | undefined>> = { "proxy:apiUrl": apiUrl, "proxy:apiKey": apiKey };
  const settings = apiSettings((key) => (key in given ? given[key] : pulumi.runtime.getConfig(key)));
  const identity = settingsIdentity(settings);
  if (cached?.identity !== identity) cached = { identity, client: newClient(settings, "pulumi-proxy-functions") };
  return { client: cached.client, account: accountOf(settings) };
}
