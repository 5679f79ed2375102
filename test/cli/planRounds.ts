import type { Stack } from "@pulumi/pulumi/automation";
import type { BillingCharge, ProxyClient } from "../../sdk";
import type { ReferenceServer } from "../../server";

/**
 * The rounds of the plan-versus-up test: each input of each kind changes at least once (triggers
 * changed, removed, naming an address the allocation does not hold; rotations; scopes; ceilings;
 * enabled; adoption; cities), some with the account changed out of band first, and `plan --refresh`
 * then. `live` is the stack and the account as they are when the round starts.
 */
export interface Spec {
  users: Record<string, Record<string, unknown>>;
  keys: Record<string, Record<string, unknown>>;
  ips: Record<string, Record<string, unknown>>;
}

export interface Round {
  title: string;
  refresh: boolean;
  spec(live: Observed): Spec;
  outOfBand?(api: ProxyClient, live: Observed, server: ReferenceServer): Promise<void>;
  /** The up fails (a charge above the ceiling): nothing may be charged. */
  upFails?: boolean;
  /** Words some change's notes must hold. */
  expectNotes?: RegExp[];
  /** Ceilings the plan must say block the user at once (by resource name and limit). */
  expectBlocked?: string[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString().replace(/\.\d+Z$/, ".000Z");
const expiry = inDays(90);

export function specRounds(): Round[] {
  let adopted: { user?: string; ip?: string } = {};
  const base: Spec = {
    users: { u1: { name: "u1", limits: { monthlyGb: 100 } } },
    keys: { k1: { name: "k1", scopes: ["usage:read"] } },
    ips: { a1: { product: "isp", country: "de", city: "berlin" }, a2: { product: "isp", country: "gb" } },
  };
  const r1: Spec = {
    users: { u1: { name: "u1", limits: { dailyGb: 2, monthlyGb: 50 } } },
    keys: { k1: { ...base.keys.k1, rotationTrigger: "t1" } },
    ips: {
      a1: { ...base.ips.a1, replaceTrigger: "r1", replaceReason: "slow" },
      a2: { ...base.ips.a2, replaceTrigger: "203.0.113.77", maxReplacementChargeCents: 500 },
    },
  };
  const r2 = (live: Observed): Spec => ({
    users: { u1: { ...r1.users.u1, enabled: false } },
    keys: { k1: { ...r1.keys.k1, graceHours: 48 } },
    ips: {
      a1: { ...base.ips.a1, replaceReason: "slow", keepCity: true, maxReplacementChargeCents: 500 },
      a2: { ...r1.ips.a2, replaceTrigger: live.output("a2", "ip") },
    },
  });
  const r3 = (live: Observed): Spec => {
    const spec = r2(live);
    return { ...spec, users: { u1: { ...spec.users.u1, enabled: true } } };
  };
  const r4 = (live: Observed): Spec => {
    const spec = r3(live);
    return {
      users: { u1: { ...spec.users.u1, name: "u1-renamed" } },
      keys: {
        k1: { ...spec.keys.k1, scopes: ["usage:read", "billing:read"] },
        k2: { name: "k2", scopes: ["keys:write"], expiresAt: expiry },
      },
      ips: {
        a1: { ...spec.ips.a1, replaceTrigger: "r3" },
        a2: { product: "dedicated", country: "us" },
      },
    };
  };
  const r6 = (live: Observed): Spec => {
    const spec = r4(live);
    return {
      ...spec,
      users: { u1: { ...spec.users.u1, reenableTrigger: "ack-1" } },
      keys: { ...spec.keys, k2: { ...spec.keys.k2, expiresAt: inDays(120) } },
      ips: { ...spec.ips, a1: { ...spec.ips.a1, city: "frankfurt" } },
    };
  };
  return [
    { title: "create every kind", refresh: false, spec: () => base },
    {
      title: "ceilings (one below today's traffic), a rotation, a free swap, a trigger naming an address not held",
      refresh: false,
      spec: () => r1,
      // 3 GB today: the new 2 GB daily ceiling blocks the user at once, the 50 GB monthly one does not.
      outOfBand: async (_api, live, server) => server.control.recordTraffic(live.id("u1"), 3e9, 10),
      expectNotes: [/does not hold/],
      expectBlocked: ["u1:dailyGb"],
    },
    { title: "disable, a new grace, a trigger removed, the address held named", refresh: false, spec: r2 },
    {
      title: "out of band: key rotated, address swapped to another city; user enabled",
      refresh: true,
      spec: r3,
      outOfBand: async (api, live) => {
        await api.keys.rotate(live.id("k1"), { grace_hours: 1 });
        await api.ips.replace(live.id("a1"), { reason: "out of band" });
      },
      expectNotes: [/rotated outside this stack/],
    },
    {
      title: "a charged swap; replacements by name, scopes, product and country; a key with an expiry",
      refresh: false,
      spec: r4,
    },
    {
      title: "a swap above its ceiling is refused and charges nothing",
      refresh: false,
      spec: (live) => {
        const spec = r4(live);
        return {
          ...spec,
          ips: { ...spec.ips, a1: { ...spec.ips.a1, replaceTrigger: "r4", maxReplacementChargeCents: 0 } },
        };
      },
      upFails: true,
    },
    {
      title:
        "out of band: emergency disable, released by reenableTrigger; a declared city the address is in; a new expiry",
      refresh: true,
      spec: r6,
      outOfBand: async (api, live) => void (await api.proxyUsers.update(live.id("u1"), { enabled: false })),
    },
    {
      title: "adopting objects made outside Pulumi",
      refresh: false,
      spec: (live) => {
        const spec = r6(live);
        return {
          users: { ...spec.users, adoptee: { name: "adoptee", adoptId: adopted.user } },
          keys: spec.keys,
          ips: { ...spec.ips, adopted: { product: "isp", country: "de", adoptId: adopted.ip } },
        };
      },
      outOfBand: async (api) => {
        const user = await api.proxyUsers.create({ name: "adoptee" });
        const ip = await api.ips.allocate({ product: "isp", country: "de" });
        adopted = { user: user.id, ip: ip.id };
      },
    },
    {
      title: "deleting a key, an address and a user",
      refresh: false,
      spec: (live) => {
        const spec = r6(live);
        return { users: spec.users, keys: { k1: spec.keys.k1 ?? {} }, ips: { a1: spec.ips.a1 ?? {} } };
      },
    },
  ];
}

type Recorded = { id: string; inputs: Record<string, unknown>; outputs: Record<string, unknown> };
type Users = Map<string, { enabled: boolean; limits: { daily_gb: number | null; monthly_gb: number | null } }>;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The stack's recorded inputs and outputs by resource name, and the account as the API holds it. */
export class Observed {
  constructor(
    readonly state: Map<string, Recorded>,
    readonly users: Users,
    readonly keyHints: Map<string, string>,
    readonly charges: BillingCharge[],
    /** Each allocation's address, by allocation id, as the API holds it. */
    readonly addresses: Map<string, string>,
  ) {}

  id(name: string): string {
    return this.state.get(name)?.id ?? "";
  }

  output(name: string, key: string): string {
    return String(this.state.get(name)?.outputs[key] ?? "");
  }

  /** Top-level inputs whose recorded value differs from `before`'s (null and absent alike). */
  inputDiff(before: Observed, name: string): string[] {
    const olds = before.state.get(name)?.inputs ?? {};
    const news = this.state.get(name)?.inputs ?? {};
    const names = new Set([...Object.keys(olds), ...Object.keys(news)].filter((key) => !key.startsWith("__")));
    return [...names].filter((key) => !same(olds[key], news[key])).sort();
  }

  chargesSince(before: Observed): BillingCharge[] {
    const seen = new Set(before.charges.map((charge) => charge.id));
    return this.charges.filter((charge) => !seen.has(charge.id));
  }

  /** Keys (by resource name) whose secret changed in place since `before`. */
  keysRotatedSince(before: Observed): string[] {
    return [...this.state.entries()]
      .filter(([, r]) => before.keyHints.has(r.id) && this.keyHints.get(r.id) !== before.keyHints.get(r.id))
      .map(([name]) => name)
      .sort();
  }

  /** Allocations (by resource name) whose address the API swapped in place since `before`. */
  addressesSwappedSince(before: Observed): string[] {
    return [...this.state.entries()]
      .filter(([, r]) => before.addresses.has(r.id) && this.addresses.get(r.id) !== before.addresses.get(r.id))
      .map(([name]) => name)
      .sort();
  }

  userEnabled(name: string): boolean | undefined {
    return this.users.get(this.id(name))?.enabled;
  }

  userLimit(name: string, limit: "dailyGb" | "monthlyGb"): number | null | undefined {
    const limits = this.users.get(this.id(name))?.limits;
    return limit === "dailyGb" ? limits?.daily_gb : limits?.monthly_gb;
  }
}

export async function observe(api: ProxyClient, stack: Stack): Promise<Observed> {
  const resources: (Recorded & { urn: string; type: string })[] =
    (await stack.exportStack()).deployment.resources ?? [];
  const state = new Map(
    resources.filter((r) => r.type.includes("proxy:")).map((r) => [r.urn.split("::").pop() ?? "", r]),
  );
  const users: Users = new Map((await all(api.proxyUsers.list())).map((user) => [user.id, user]));
  const keyHints = new Map((await all(api.keys.list())).map((key) => [key.id, key.secret_hint]));
  const addresses = new Map((await all(api.ips.list())).map((allocation) => [allocation.id, allocation.ip]));
  return new Observed(state, users, keyHints, await all(api.billing.charges()), addresses);
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const found: T[] = [];
  for await (const item of items) found.push(item);
  return found;
}
