import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../server";
import { DAY_MS } from "../../server/clock";
import { type Api, expectError, startApi, T0 } from "./harness";

let api: Api;
afterEach(() => api?.server.close());

describe("usage", () => {
  it("reports recorded traffic per day or month, filtered by proxy user and date range", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock });
    const a = await api.createUser("a");
    const b = await api.createUser("b");
    const { recordTraffic } = api.server.control;
    recordTraffic(a.id, 1000, 10);
    recordTraffic(a.id, 500, 5, T0 + 3600_000);
    recordTraffic(b.id, 200, 2, T0 + DAY_MS);
    recordTraffic(a.id, 7, 1, Date.UTC(2025, 3, 2));

    const march = await api.get("/v1/usage?from=2025-03-01&to=2025-03-31");
    expect(march.json).toEqual({
      usage: [
        { proxy_user_id: a.id, period_start: "2025-03-10", bytes: 1500, requests: 15 },
        { proxy_user_id: b.id, period_start: "2025-03-11", bytes: 200, requests: 2 },
      ],
      totals: { bytes: 1700, requests: 17 },
    });
    const monthly = await api.get(`/v1/usage?from=2025-03-11&to=2025-04-30&granularity=month&proxy_user_id=${a.id}`);
    expect(monthly.json).toEqual({
      usage: [{ proxy_user_id: a.id, period_start: "2025-04-01", bytes: 7, requests: 1 }],
      totals: { bytes: 7, requests: 1 },
    });
    expect((await api.get("/v1/usage?from=2024-01-01&to=2024-01-31")).json).toEqual({
      usage: [],
      totals: { bytes: 0, requests: 0 },
    });
    expect(() => recordTraffic("pu_unknown123", 1, 1)).toThrow();
    expect(() => recordTraffic(a.id, -1, 1)).toThrow(RangeError);
  });

  it("validates the query", async () => {
    api = await startApi();
    for (const query of [
      "",
      "?from=2025-03-01",
      "?from=2025-02-30&to=2025-03-01",
      "?from=2025-03-02&to=2025-03-01",
      "?from=2024-01-01&to=2025-03-01",
      "?from=2025-03-01&to=2025-03-02&granularity=week",
      "?from=2025-03-01&to=2025-03-02&proxy_user_id=bob",
    ]) {
      expectError(await api.get(`/v1/usage${query}`), 400, "invalid_request");
    }
    const reversed = await api.get("/v1/usage?from=2025-03-02&to=2025-03-01");
    expect(reversed.json.error.details.issues).toEqual([{ path: "to", message: "must not be before from" }]);
  });
});

describe("billing", () => {
  it("reports the balance and lists charges newest first, paginated", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock, balanceCents: 5000 });
    expect((await api.get("/v1/billing/balance")).json).toEqual({ balance_cents: 5000, currency: "usd" });
    const ids: string[] = [];
    for (const country of ["us", "de", "gb"]) {
      ids.push((await api.allocate({ product: "isp", country })).id);
      clock.advance(1000);
    }
    const first = await api.get("/v1/billing/charges?limit=2");
    expect(first.json.charges.map((charge: { ref: string }) => charge.ref)).toEqual([ids[2], ids[1]]);
    const second = await api.get(`/v1/billing/charges?limit=2&cursor=${first.json.next_cursor}`);
    expect(second.json).toEqual({
      charges: [
        {
          id: expect.stringMatching(/^ch_/),
          kind: "ip_allocation",
          amount_cents: 300,
          currency: "usd",
          created_at: new Date(T0).toISOString(),
          ref: ids[0],
        },
      ],
      next_cursor: null,
    });
    expectError(await api.get(`/v1/proxy-users?cursor=${first.json.next_cursor}`), 400, "invalid_request");
    expect((await api.get("/v1/billing/balance")).json.balance_cents).toBe(4100);
  });

  it("tops up by a positive, bounded, whole number of cents", async () => {
    api = await startApi({ balanceCents: 0 });
    const topped = await api.post("/v1/billing/top-up", { amount_cents: 2500 });
    expect(topped.status).toBe(200);
    expect(topped.json).toEqual({ balance_cents: 2500, currency: "usd" });
    for (const amount of [0, -5, 1.5, "100", 10_000_001]) {
      expectError(await api.post("/v1/billing/top-up", { amount_cents: amount }), 400, "invalid_request");
    }
    expect((await api.get("/v1/billing/balance")).json.balance_cents).toBe(2500);
    expect((await api.get("/v1/billing/charges")).json.charges).toEqual([]);
  });
});
