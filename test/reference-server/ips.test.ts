import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../server";
import { DAY_MS } from "../../server/clock";
import { type Api, expectError, startApi, T0 } from "./harness";

let api: Api;
afterEach(() => api?.server.close());

const iso = (ms: number): string => new Date(ms).toISOString();
const balance = async (): Promise<number> => (await api.get("/v1/billing/balance")).json.balance_cents;

describe("allocation", () => {
  it("allocates from the documentation ranges, charges one term, and renews every 30 days", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock });
    const allocated = await api.allocate({ product: "isp", country: "us", city: "new york" });
    expect(allocated).toMatchObject({
      ip: "192.0.2.10",
      product: "isp",
      country: "us",
      city: "new york",
      asn: "as7922",
      allocated_at: iso(T0),
      renews_at: iso(T0 + 30 * DAY_MS),
      health: "good",
      blacklists: 0,
      replacements_this_month: 0,
      free_replacements_remaining: 2,
    });
    expect(allocated.id).toMatch(/^alloc_/);
    expect(await balance()).toBe(10_000 - 300);
    const charges = (await api.get("/v1/billing/charges")).json.charges;
    expect(charges).toEqual([
      expect.objectContaining({ kind: "ip_allocation", amount_cents: 300, currency: "usd", ref: allocated.id }),
    ]);
    const dedicated = await api.allocate({ product: "dedicated", country: "de" });
    expect(dedicated).toMatchObject({ ip: "198.51.100.10", city: "frankfurt" });
    expect(await balance()).toBe(10_000 - 300 - 500);

    clock.set(T0 + 30 * DAY_MS);
    expect((await api.get(`/v1/ips/${allocated.id}`)).json.renews_at).toBe(iso(T0 + 60 * DAY_MS));
  });

  it("needs the balance to cover the term (402) and capacity in the place (409)", async () => {
    api = await startApi();
    api.server.control.setBalance(299);
    const poor = await api.post("/v1/ips", { product: "isp", country: "us" });
    expectError(poor, 402, "insufficient_funds");
    expect(poor.json.error.details).toEqual({ charge_cents: 300, balance_cents: 299 });
    expect((await api.get("/v1/ips")).json.ips).toEqual([]);
    api.server.control.setBalance(10_000);
    for (let i = 0; i < 3; i++) await api.allocate({ product: "isp", country: "nl", city: "amsterdam" });
    expectError(await api.post("/v1/ips", { product: "isp", country: "nl" }), 409, "no_capacity");
    expectError(await api.post("/v1/ips", { product: "isp", country: "fr" }), 409, "no_capacity");
    expect(await balance()).toBe(10_000 - 900);
    const invalid = await api.post("/v1/ips", { product: "residential", country: "US" });
    expectError(invalid, 400, "invalid_request");
    expect(invalid.json.error.details.issues.map((issue: { path: string }) => issue.path)).toEqual([
      "product",
      "country",
    ]);
  });

  it("finds an allocation by address or id, lists with filters, and releases it to the pool", async () => {
    api = await startApi();
    const a = await api.allocate({ product: "isp", country: "us" });
    const b = await api.allocate({ product: "dedicated", country: "us", city: "dallas" });
    const c = await api.allocate({ product: "isp", country: "jp" });
    expect((await api.get(`/v1/ips/${a.ip}`)).json).toEqual(a);
    expect((await api.get(`/v1/ips/${a.id}`)).json).toEqual(a);
    expectError(await api.get("/v1/ips/999.1.1.1"), 400, "invalid_request");
    expectError(await api.get("/v1/ips/banana"), 400, "invalid_request");
    expectError(await api.get("/v1/ips/192.0.2.200"), 404, "not_found");
    expectError(await api.get("/v1/ips/alloc_unknown123"), 404, "not_found");
    const ids = async (query: string) => (await api.get(`/v1/ips${query}`)).json.ips.map((ip: { id: string }) => ip.id);
    expect(await ids("")).toEqual([a.id, b.id, c.id]);
    expect(await ids("?product=isp")).toEqual([a.id, c.id]);
    expect(await ids("?country=us&product=dedicated")).toEqual([b.id]);
    expect(await ids("?city=dallas")).toEqual([b.id]);
    expectError(await api.get("/v1/ips?product=residential"), 400, "invalid_request");
    const page = await api.get("/v1/ips?limit=2");
    expect(page.json.next_cursor).toEqual(expect.any(String));
    expect(
      (await api.get(`/v1/ips?limit=2&cursor=${page.json.next_cursor}`)).json.ips.map((ip: { id: string }) => ip.id),
    ).toEqual([c.id]);

    expect((await api.delete(`/v1/ips/${a.ip}`)).status).toBe(204);
    expectError(await api.get(`/v1/ips/${a.id}`), 404, "not_found");
    expectError(await api.delete(`/v1/ips/${a.id}`), 404, "not_found");
    expect((await api.allocate({ product: "isp", country: "us" })).ip).toBe(a.ip);
  });

  it("reports health set out of band", async () => {
    api = await startApi();
    const a = await api.allocate();
    api.server.control.setIpHealth(a.ip, { health: "bad", blacklists: 3 });
    expect((await api.get(`/v1/ips/${a.id}`)).json).toMatchObject({ health: "bad", blacklists: 3 });
    expect(() => api.server.control.setIpHealth("192.0.2.200", { health: "good" })).toThrow();
  });
});

describe("replacement", () => {
  it("keeps the id, changes the address, gives two free replacements a month, then charges prorated", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock });
    const a = await api.allocate({ product: "isp", country: "us", city: "new york" });
    api.server.control.setIpHealth(a.id, { health: "bad", blacklists: 2 });
    const first = await api.post(`/v1/ips/${a.ip}/replace`, { reason: "blacklisted" });
    expect(first.status).toBe(200);
    expect(first.json.replaced_ip).toBe("192.0.2.10");
    expect(first.json.charge).toBeNull();
    expect(first.json.allocation).toMatchObject({
      id: a.id,
      ip: "192.0.2.11",
      allocated_at: a.allocated_at,
      renews_at: a.renews_at,
      health: "good",
      blacklists: 0,
      replacements_this_month: 1,
      free_replacements_remaining: 1,
    });
    const second = await api.post(`/v1/ips/${a.id}/replace`, { reason: "a reason nobody listed" });
    expect(second.json).toMatchObject({
      replaced_ip: "192.0.2.11",
      charge: null,
      allocation: { ip: "192.0.2.12", free_replacements_remaining: 0 },
    });

    clock.advance(5 * DAY_MS);
    const before = await balance();
    // 25 of 30 days left: ceil(300 × 25 / 30) = 250.
    const capped = await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow", max_charge_cents: 249 });
    expectError(capped, 409, "charge_exceeds_limit");
    expect(capped.json.error.details.charge_cents).toBe(250);
    api.server.control.setBalance(249);
    const poor = await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow" });
    expectError(poor, 402, "insufficient_funds");
    expect(poor.json.error.details.charge_cents).toBe(250);
    api.server.control.setBalance(before);
    expect((await api.get(`/v1/ips/${a.id}`)).json).toMatchObject({ ip: "192.0.2.12", replacements_this_month: 2 });
    expect(await balance()).toBe(before);

    const third = await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow", max_charge_cents: 250 });
    expect(third.status).toBe(200);
    expect(third.json.charge).toEqual({
      id: expect.stringMatching(/^ch_/),
      amount_cents: 250,
      currency: "usd",
      prorated: true,
    });
    expect(third.json.allocation.ip).toBe("192.0.2.13");
    expect(await balance()).toBe(before - 250);
    const [latest] = (await api.get("/v1/billing/charges")).json.charges;
    expect(latest).toMatchObject({
      id: third.json.charge.id,
      kind: "ip_replacement",
      amount_cents: 250,
      ref: a.id,
      created_at: iso(T0 + 5 * DAY_MS),
    });

    clock.set(T0 + 29 * DAY_MS + 1);
    const dedicated = await api.allocate({ product: "dedicated", country: "gb" });
    for (let i = 0; i < 2; i++) await api.post(`/v1/ips/${dedicated.id}/replace`, { reason: "slow" });
    // Fresh term: 30 of 30 days left at 500 cents.
    expect((await api.post(`/v1/ips/${dedicated.id}/replace`, { reason: "slow" })).json.charge.amount_cents).toBe(500);
    // April now: the isp allocation has its two free replacements again, and under one day of term left.
    for (let i = 0; i < 2; i++)
      expect((await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow" })).json.charge).toBeNull();
    // The part-day counts as one: ceil(300 × 1 / 30) = 10.
    expect((await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow" })).json.charge.amount_cents).toBe(10);
  });

  it("starts the free allowance again in a new UTC month", async () => {
    const clock = new ManualClock(Date.UTC(2025, 2, 31, 23, 59, 59));
    api = await startApi({ clock });
    const a = await api.allocate();
    for (let i = 0; i < 2; i++) await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow" });
    expect((await api.get(`/v1/ips/${a.id}`)).json.free_replacements_remaining).toBe(0);
    clock.advance(1000);
    expect((await api.get(`/v1/ips/${a.id}`)).json).toMatchObject({
      replacements_this_month: 0,
      free_replacements_remaining: 2,
    });
    expect((await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow" })).json.charge).toBeNull();
  });

  it("never hands a replaced address back to the same allocation within the term, and may in the next", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock, balanceCents: 100_000 });
    const a = await api.allocate({ product: "isp", country: "us", city: "miami" });
    expect(a.ip).toBe("192.0.2.250");
    const seen = [a.ip];
    for (let i = 0; i < 2; i++)
      seen.push((await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow", keep_city: true })).json.allocation.ip);
    expect(seen).toEqual(["192.0.2.250", "192.0.2.251", "192.0.2.252"]);
    const stuck = await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow", keep_city: true });
    expectError(stuck, 409, "no_capacity");
    expect(stuck.json.error.details).toEqual({ country: "us", city: "miami" });
    expect((await api.get(`/v1/ips/${a.id}`)).json).toMatchObject({ ip: "192.0.2.252", replacements_this_month: 2 });

    const elsewhere = await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow" });
    expect(elsewhere.json.allocation).toMatchObject({
      country: "us",
      city: "new york",
      ip: "192.0.2.10",
      asn: "as7922",
    });
    const other = await api.allocate({ product: "isp", country: "us", city: "miami" });
    expect(other.ip).toBe("192.0.2.250");

    clock.set(T0 + 30 * DAY_MS);
    const nextTerm = await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow", keep_city: true });
    expect(nextTerm.json.allocation.ip).toBe("192.0.2.11");
    expect(nextTerm.json.allocation.renews_at).toBe(iso(T0 + 60 * DAY_MS));
  });

  it("validates the body and the address", async () => {
    api = await startApi();
    const a = await api.allocate();
    expectError(await api.post(`/v1/ips/${a.id}/replace`, {}), 400, "invalid_request");
    expectError(await api.post(`/v1/ips/${a.id}/replace`, { reason: "" }), 400, "invalid_request");
    expectError(await api.post(`/v1/ips/${a.id}/replace`, { reason: "x".repeat(201) }), 400, "invalid_request");
    expectError(
      await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow", max_charge_cents: -1 }),
      400,
      "invalid_request",
    );
    expectError(
      await api.post(`/v1/ips/${a.id}/replace`, { reason: "slow", keep_city: "yes" }),
      400,
      "invalid_request",
    );
    expectError(await api.post("/v1/ips/10.0.0/replace", { reason: "slow" }), 400, "invalid_request");
    expectError(await api.post("/v1/ips/203.0.113.99/replace", { reason: "slow" }), 404, "not_found");
    expect((await api.get(`/v1/ips/${a.id}`)).json.ip).toBe(a.ip);
  });
});
