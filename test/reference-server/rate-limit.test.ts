import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../server";
import { MINUTE_MS, SECOND_MS } from "../../server/clock";
import { type Api, expectError, startApi, T0 } from "./harness";

let api: Api;
afterEach(() => api?.server.close());

function rateHeaders(result: { headers: Record<string, string> }) {
  return {
    limit: Number(result.headers["x-ratelimit-limit"]),
    remaining: Number(result.headers["x-ratelimit-remaining"]),
    reset: Number(result.headers["x-ratelimit-reset"]),
  };
}

describe("rate limit", () => {
  it("counts per key in fixed 60 s windows, with headers on every authenticated answer and 429 past the limit", async () => {
    const clock = new ManualClock(T0 + 15 * SECOND_MS);
    api = await startApi({ clock, rateLimitPerMinute: 3 });
    const key = api.key(["proxy-users:read"]);
    const first = await api.get("/v1/proxy-users", { key });
    expect(rateHeaders(first)).toEqual({ limit: 3, remaining: 2, reset: 45 });
    const forbidden = await api.get("/v1/billing/balance", { key });
    expectError(forbidden, 403, "insufficient_scope");
    expect(rateHeaders(forbidden)).toEqual({ limit: 3, remaining: 1, reset: 45 });
    clock.advance(500);
    const missing = await api.get("/v1/proxy-users/pu_missing123", { key });
    expectError(missing, 404, "not_found");
    expect(rateHeaders(missing)).toEqual({ limit: 3, remaining: 0, reset: 45 });
    const limited = await api.get("/v1/proxy-users", { key });
    expectError(limited, 429, "rate_limited");
    expect(rateHeaders(limited)).toEqual({ limit: 3, remaining: 0, reset: 45 });
    expect(limited.headers["retry-after"]).toBe("45");
    expect((await api.get("/v1/proxy-users")).status).toBe(200);
    expect(api.server.stats().rateLimited).toBe(1);

    clock.set(T0 + MINUTE_MS - 1);
    const lastMoment = await api.get("/v1/proxy-users", { key });
    expect(lastMoment.status).toBe(429);
    expect(lastMoment.headers["retry-after"]).toBe("1");
    expect(rateHeaders(lastMoment).reset).toBe(1);

    clock.set(T0 + MINUTE_MS);
    const fresh = await api.get("/v1/proxy-users", { key });
    expect(fresh.status).toBe(200);
    expect(rateHeaders(fresh)).toEqual({ limit: 3, remaining: 2, reset: 60 });
  });

  it("shares one budget between the secrets of a rotated key", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock, rateLimitPerMinute: 4 });
    const key = api.server.control.createKey({ name: "k", scopes: ["proxy-users:read", "keys:write"] });
    const rotated = await api.post(`/v1/keys/${key.id}/rotate`, { grace_hours: 1 }, { key: key.secret });
    expect(rotated.status).toBe(200);
    expect((await api.get("/v1/proxy-users", { key: key.secret })).status).toBe(200);
    expect((await api.get("/v1/proxy-users", { key: rotated.json.secret })).status).toBe(200);
    const last = await api.get("/v1/proxy-users", { key: key.secret });
    expect(rateHeaders(last).remaining).toBe(0);
    expectError(await api.get("/v1/proxy-users", { key: rotated.json.secret }), 429, "rate_limited");
  });

  it("takes a new limit at once", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock });
    expect(rateHeaders(await api.get("/v1/proxy-users")).limit).toBe(600);
    api.server.setRateLimit(1);
    expectError(await api.get("/v1/proxy-users"), 429, "rate_limited");
    expect(() => api.server.setRateLimit(0)).toThrow(RangeError);
  });
});
