import { request } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../server";
import { HOUR_MS } from "../../server/clock";
import { type Api, expectError, startApi, T0 } from "./harness";

let api: Api;
afterEach(() => api?.server.close());

const withKey = (key: string) => ({ headers: { "idempotency-key": key } });
const userCount = (): number => api.server.control.snapshot().proxyUsers.length;

describe("idempotency", () => {
  it("replays the first answer for the same key and body, and refuses a different body", async () => {
    api = await startApi();
    const first = await api.post(
      "/v1/proxy-users",
      { name: "once", limits: { daily_gb: 1, monthly_gb: 2 } },
      withKey("create-once"),
    );
    expect(first.status).toBe(201);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    const reordered = await api.call("POST", "/v1/proxy-users", {
      rawBody: '{ "limits": {"monthly_gb": 2, "daily_gb": 1}, "name": "once" }',
      ...withKey("create-once"),
    });
    expect(reordered.status).toBe(201);
    expect(reordered.headers["idempotent-replayed"]).toBe("true");
    expect(reordered.json).toEqual(first.json);
    expect(reordered.headers["x-ratelimit-remaining"]).toEqual(expect.any(String));
    expect(userCount()).toBe(1);
    expectError(
      await api.post("/v1/proxy-users", { name: "other" }, withKey("create-once")),
      409,
      "idempotency_key_reused",
    );
    expectError(
      await api.post(`/v1/proxy-users/${first.json.id}/disable`, { name: "once" }, withKey("create-once")),
      409,
      "idempotency_key_reused",
    );
  });

  it("scopes keys per API key, records only successes, and forgets after 24 hours", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock, balanceCents: 299 });
    const poor = await api.post("/v1/ips", { product: "isp", country: "us" }, withKey("alloc-1"));
    expectError(poor, 402, "insufficient_funds");
    api.server.control.setBalance(10_000);
    const first = await api.post("/v1/ips", { product: "isp", country: "us" }, withKey("alloc-1"));
    expect(first.status).toBe(201);
    const otherKey = api.key(["billing:write"]);
    const other = await api.post(
      "/v1/ips",
      { product: "isp", country: "us" },
      { key: otherKey, ...withKey("alloc-1") },
    );
    expect(other.headers["idempotent-replayed"]).toBeUndefined();
    expect(other.json.id).not.toBe(first.json.id);

    clock.advance(24 * HOUR_MS - 1);
    expect((await api.post("/v1/ips", { product: "isp", country: "us" }, withKey("alloc-1"))).json.id).toBe(
      first.json.id,
    );
    clock.advance(1);
    const later = await api.post("/v1/ips", { product: "isp", country: "us" }, withKey("alloc-1"));
    expect(later.headers["idempotent-replayed"]).toBeUndefined();
    expect(later.json.id).not.toBe(first.json.id);
  });

  it("bounds the header to 1-255 characters", async () => {
    api = await startApi();
    const tooLong = await api.post("/v1/proxy-users", { name: "long" }, withKey("k".repeat(256)));
    expectError(tooLong, 400, "invalid_request");
    expect(tooLong.json.error.details.issues[0].path).toBe("idempotency-key");
    expect((await api.post("/v1/proxy-users", { name: "long" }, withKey("k".repeat(255)))).status).toBe(201);
  });

  it("replays a secret-bearing answer only to the secret that sent the request, and stores it sealed", async () => {
    api = await startApi();
    const admin = api.server.control.createKey({ name: "admin", scopes: ["keys:write"] });
    const created = await api.post(
      "/v1/keys",
      { name: "ci", scopes: ["keys:write"] },
      { key: admin.secret, ...withKey("mint") },
    );
    const replayed = await api.post(
      "/v1/keys",
      { name: "ci", scopes: ["keys:write"] },
      { key: admin.secret, ...withKey("mint") },
    );
    expect(replayed.json.secret).toBe(created.json.secret);
    const rotated = await api.post(`/v1/keys/${admin.id}/rotate`, { grace_hours: 1 }, { key: admin.secret });
    const fromNewSecret = await api.post(
      "/v1/keys",
      { name: "ci", scopes: ["keys:write"] },
      { key: rotated.json.secret, ...withKey("mint") },
    );
    expectError(fromNewSecret, 409, "idempotency_key_reused");
    expect(JSON.stringify(fromNewSecret.json)).not.toContain(created.json.secret);
  });
});

describe("fault injection", () => {
  it("fails 'before' faults without touching state, for the next `count` matching requests only", async () => {
    api = await startApi();
    api.server.injectFault({ method: "POST", path: "/v1/proxy-users", kind: "503", count: 2 });
    api.server.injectFault({ method: "GET", path: "/v1/proxy-users/{id}", kind: "500" });
    expectError(await api.post("/v1/proxy-users", { name: "a" }), 503, "service_unavailable");
    expectError(await api.post("/v1/proxy-users", { name: "a" }), 503, "service_unavailable");
    expect(userCount()).toBe(0);
    const user = await api.createUser("a");
    expectError(await api.get(`/v1/proxy-users/${user.id}`), 500, "internal_error");
    expect((await api.get(`/v1/proxy-users/${user.id}`)).status).toBe(200);

    api.server.injectFault({ path: /\/v1\/proxy-users$/, kind: "reset" });
    await expect(api.post("/v1/proxy-users", { name: "b" })).rejects.toThrow();
    expect(userCount()).toBe(1);
    expect(api.server.stats().byStatus).toMatchObject({ "503": 2, "500": 1, reset: 1 });
  });

  it("'after' faults commit the change and lose the reply; an idempotent retry replays instead of duplicating", async () => {
    api = await startApi();
    api.server.injectFault({ method: "POST", path: "/v1/proxy-users", kind: "500", phase: "after" });
    expectError(await api.post("/v1/proxy-users", { name: "lost-reply" }, withKey("retry-me")), 500, "internal_error");
    expect(userCount()).toBe(1);
    const retried = await api.post("/v1/proxy-users", { name: "lost-reply" }, withKey("retry-me"));
    expect(retried.status).toBe(201);
    expect(retried.headers["idempotent-replayed"]).toBe("true");
    expect(retried.json.password).toEqual(expect.any(String));
    expect(userCount()).toBe(1);

    api.server.injectFault({ method: "POST", path: "/v1/ips", kind: "reset", phase: "after" });
    await expect(api.post("/v1/ips", { product: "isp", country: "de" }, withKey("alloc"))).rejects.toThrow();
    expect(api.server.control.snapshot().ips).toHaveLength(1);
    const allocated = await api.post("/v1/ips", { product: "isp", country: "de" }, withKey("alloc"));
    expect(allocated.headers["idempotent-replayed"]).toBe("true");
    expect(api.server.control.snapshot().ips).toEqual([allocated.json]);
    expect(api.server.control.snapshot().charges).toHaveLength(1);

    // Without the header the careless retry does it twice; that is the failure the SDK must avoid.
    api.server.injectFault({ method: "POST", path: "/v1/ips", kind: "503", phase: "after" });
    await api.post("/v1/ips", { product: "isp", country: "de" });
    await api.post("/v1/ips", { product: "isp", country: "de" });
    expect(api.server.control.snapshot().ips).toHaveLength(3);
  });

  it("holds replies after the change commits; a client killed meanwhile gets its secrets back by replay", async () => {
    api = await startApi();
    api.server.injectFault({ method: "POST", path: "/v1/keys", kind: "hold" });
    api.server.injectFault({ method: "POST", path: "/v1/proxy-users", kind: "hold" });
    const killed = new AbortController();
    const send = (path: string, body: unknown, key: string) =>
      request(`${api.server.url}${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${api.server.rootKey}`,
          "content-type": "application/json",
          "idempotency-key": key,
        },
        body: JSON.stringify(body),
        signal: killed.signal,
      }).catch(() => "killed");
    const inFlight = [
      send("/v1/keys", { name: "held-key", scopes: ["usage:read"] }, "held-key-1"),
      send("/v1/proxy-users", { name: "held-user" }, "held-user-1"),
    ];
    expect((await api.server.waitForHeldReplies(2, 5_000)).sort()).toEqual(["POST /v1/keys", "POST /v1/proxy-users"]);
    const held = api.server.control.snapshot();
    expect(held.keys.map((key) => (key as { name: string }).name)).toContain("held-key");
    expect(held.proxyUsers).toHaveLength(1);
    killed.abort();
    expect(await Promise.all(inFlight)).toEqual(["killed", "killed"]);
    expect(api.server.releaseHeldReplies()).toBe(2);

    const key = await api.post("/v1/keys", { name: "held-key", scopes: ["usage:read"] }, withKey("held-key-1"));
    expect(key.headers["idempotent-replayed"]).toBe("true");
    expect(key.json.secret).toMatch(/^live_/);
    expect((await api.get(`/v1/keys/${key.json.id}`, { key: key.json.secret })).json.secret_hint).toBe(
      key.json.secret.slice(-4),
    );
    const user = await api.post("/v1/proxy-users", { name: "held-user" }, withKey("held-user-1"));
    expect(user.headers["idempotent-replayed"]).toBe("true");
    expect(user.json.password).toEqual(expect.any(String));
    const after = api.server.control.snapshot();
    expect(after.keys.filter((k) => (k as { name: string }).name === "held-key")).toHaveLength(1);
    expect(after.proxyUsers).toHaveLength(1);
    expect(api.server.heldReplies()).toEqual([]);
  });

  it("adds latency, before or after the commit", async () => {
    api = await startApi();
    api.server.injectFault({ path: "/v1/billing/balance", kind: "latency", latencyMs: 150 });
    api.server.injectFault({
      method: "POST",
      path: "/v1/proxy-users",
      kind: "latency",
      latencyMs: 150,
      phase: "after",
    });
    const started = Date.now();
    expect((await api.get("/v1/billing/balance")).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    let answered = false;
    const pending = api.post("/v1/proxy-users", { name: "slow" }).then((result) => {
      answered = true;
      return result;
    });
    await vi.waitFor(() => expect(userCount()).toBe(1), { interval: 5 });
    expect(answered).toBe(false);
    expect((await pending).status).toBe(201);
    expect(() => api.server.injectFault({ kind: "latency" })).toThrow(RangeError);
  });

  it("random faults follow the rates and the seed, and can be switched off", async () => {
    api = await startApi({ faults: { errorRate: 1, errorStatuses: [503] } });
    expectError(await api.get("/v1/billing/balance"), 503, "service_unavailable");
    api.server.setFaults({ afterCommitRate: 1, errorStatuses: [500] });
    expect((await api.get("/v1/billing/balance")).status).toBe(200);
    const outcomes = new Set<string>();
    for (let i = 0; i < 12; i++) {
      try {
        outcomes.add(String((await api.post("/v1/proxy-users", { name: `after-${i}` })).status));
      } catch {
        outcomes.add("reset");
      }
    }
    expect(outcomes).toEqual(new Set(["500", "reset"]));
    expect(userCount()).toBe(12);

    const sequence = async (seed: number): Promise<number[]> => {
      api.server.setFaults({ errorRate: 0.5, seed });
      const statuses: number[] = [];
      for (let i = 0; i < 16; i++) statuses.push((await api.get("/v1/billing/balance")).status);
      return statuses;
    };
    const first = await sequence(42);
    expect(await sequence(42)).toEqual(first);
    expect(first).toContain(200);
    expect(first.some((status) => status >= 500)).toBe(true);
    api.server.setFaults({});
    expect((await api.get("/v1/billing/balance")).status).toBe(200);
    expect(() => api.server.setFaults({ errorRate: 2 })).toThrow(RangeError);
  });
});
