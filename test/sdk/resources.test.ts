import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, ProxyClient, schemas } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";

let server: ReferenceServer;
let client: ProxyClient;

beforeAll(async () => {
  server = await startReferenceServer({ balanceCents: 100_000 });
  client = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
});
afterAll(() => server.close());

describe("proxy users", () => {
  it("create, get, update, disable, list and delete", async () => {
    const created = await client.proxyUsers.create({ name: "res-alice", limits: { daily_gb: 1, monthly_gb: 20 } });
    expect(created.password.length).toBeGreaterThan(0);
    expect(created).toMatchObject({
      name: "res-alice",
      username: "res-alice",
      enabled: true,
      limits: { daily_gb: 1, monthly_gb: 20 },
    });

    const got = await client.proxyUsers.get(created.id);
    expect(got.id).toBe(created.id);
    expect("password" in got).toBe(false);

    const updated = await client.proxyUsers.update(created.id, { limits: { daily_gb: 2 } });
    expect(updated.limits).toEqual({ daily_gb: 2, monthly_gb: 20 });

    const disabled = await client.proxyUsers.disable(created.id);
    expect(disabled.enabled).toBe(false);
    const reenabled = await client.proxyUsers.update(created.id, { enabled: true });
    expect(reenabled.enabled).toBe(true);

    const page = await client.proxyUsers.list({ enabled: true });
    expect(page.items.map((u) => u.id)).toContain(created.id);
    expect(page.nextCursor).toBeNull();

    await client.proxyUsers.delete(created.id);
    await expect(client.proxyUsers.get(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("walks every page with for await, once each, and awaits to the first page", async () => {
    const names = Array.from({ length: 7 }, (_, i) => `page-user-${i}`);
    const created = await Promise.all(names.map((name) => client.proxyUsers.create({ name })));
    const first = await client.proxyUsers.list({ limit: 3 });
    expect(first.items).toHaveLength(3);
    expect(first.nextCursor).not.toBeNull();

    const seen: string[] = [];
    for await (const user of client.proxyUsers.list({ limit: 3 })) seen.push(user.id);
    expect(new Set(seen).size).toBe(seen.length);
    for (const user of created) expect(seen).toContain(user.id);

    const pages: number[] = [];
    for await (const p of client.proxyUsers.list({ limit: 3 }).pages()) pages.push(p.items.length);
    expect(pages.reduce((a, b) => a + b, 0)).toBe(seen.length);
    expect(pages.length).toBeGreaterThanOrEqual(3);
  });

  it("url-encodes ids instead of letting them change the path", async () => {
    await expect(client.proxyUsers.get("pu_nope/../../keys")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("ips", () => {
  it("allocate, get by address and by id, list with filters, replace and release", async () => {
    const alloc = await client.ips.allocate({ product: "isp", country: "de", city: "berlin" });
    expect(alloc).toMatchObject({ product: "isp", country: "de", city: "berlin" });
    expect((await client.ips.get(alloc.ip)).id).toBe(alloc.id);
    expect((await client.ips.get(alloc.id)).ip).toBe(alloc.ip);

    const isp = await client.ips.list({ product: "isp", country: "de" });
    expect(isp.items.map((a) => a.id)).toContain(alloc.id);
    const none = await client.ips.list({ product: "dedicated", country: "de" });
    expect(none.items.map((a) => a.id)).not.toContain(alloc.id);

    const replaced = await client.ips.replace(alloc.ip, { reason: "blacklisted", keep_city: true });
    expect(replaced.replaced_ip).toBe(alloc.ip);
    expect(replaced.allocation.id).toBe(alloc.id);
    expect(replaced.allocation.ip).not.toBe(alloc.ip);
    expect(replaced.allocation.city).toBe("berlin");
    expect(replaced.charge).toBeNull();

    await client.ips.release(alloc.id);
    await expect(client.ips.get(alloc.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("keys", () => {
  it("create, get, list without secrets, rotate with grace, revoke", async () => {
    const key = await client.keys.create({ name: "ci", scopes: ["usage:read", "proxy-users:read"] });
    expect(key.secret).toMatch(schemas.SecretPattern);
    expect(key.scopes).toEqual(["usage:read", "proxy-users:read"]);

    const got = await client.keys.get(key.id);
    expect("secret" in got).toBe(false);
    expect(got.secret_hint).toBe(key.secret.slice(-4));

    const all = await client.keys.list();
    expect(all.items.map((k) => k.id)).toContain(key.id);
    for (const k of all.items) expect("secret" in k).toBe(false);

    const rotated = await client.keys.rotate(key.id, { grace_hours: 1 });
    expect(rotated.secret).not.toBe(key.secret);
    expect(rotated.previous_secret_expires_at).not.toBeNull();
    // Both secrets work during the grace period.
    for (const secret of [key.secret, rotated.secret]) {
      const scoped = new ProxyClient({ baseUrl: server.url, apiKey: secret });
      await expect(scoped.proxyUsers.list()).resolves.toBeDefined();
    }
    const defaultGrace = await client.keys.rotate(key.id);
    expect(defaultGrace.secret).not.toBe(rotated.secret);

    await client.keys.revoke(key.id);
    await expect(client.keys.get(key.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("usage and billing", () => {
  it("reports usage recorded by the gateways", async () => {
    const user = await client.proxyUsers.create({ name: "usage-bob" });
    const today = new Date(server.clock.now()).toISOString().slice(0, 10);
    server.control.recordTraffic(user.id, 5_000, 7);
    const report = await client.usage.get({ from: today, to: today, proxy_user_id: user.id, granularity: "day" });
    expect(report.totals).toEqual({ bytes: 5_000, requests: 7 });
    expect(report.usage).toEqual([{ proxy_user_id: user.id, period_start: today, bytes: 5_000, requests: 7 }]);
  });

  it("balance, top-up and charges", async () => {
    const before = await client.billing.balance();
    const after = await client.billing.topUp({ amount_cents: 1_234 });
    expect(after.balance_cents).toBe(before.balance_cents + 1_234);
    expect(after.currency).toBe("usd");
    await client.ips.allocate({ product: "dedicated", country: "gb" });
    const charges = await client.billing.charges({ limit: 1 });
    expect(charges.items).toHaveLength(1);
    expect(charges.items[0]?.kind).toBe("ip_allocation");
    const everything = await client.billing.charges().all();
    expect(everything.length).toBeGreaterThanOrEqual(1);
  });
});

describe("stats", () => {
  it("counts the HTTP attempts the client made", async () => {
    const fresh = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    await fresh.billing.balance();
    await fresh.billing.balance();
    expect(fresh.stats).toEqual({ requests: 2, retries: 0, rateLimited: 0 });
  });
});
