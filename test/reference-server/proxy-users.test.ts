import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../server";
import { type Api, expectError, startApi, T0 } from "./harness";

let api: Api;
afterEach(() => api?.server.close());

describe("proxy users", () => {
  it("creates with defaults, returns the password once, and never again", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock });
    const created = await api.post("/v1/proxy-users", { name: "scraper-1" });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      name: "scraper-1",
      username: "scraper-1",
      limits: { daily_gb: null, monthly_gb: null },
      enabled: true,
      created_at: new Date(T0).toISOString(),
      updated_at: new Date(T0).toISOString(),
    });
    expect(created.json.id).toMatch(/^pu_/);
    expect(created.json.password).toEqual(expect.any(String));
    const got = await api.get(`/v1/proxy-users/${created.json.id}`);
    expect(got.json.password).toBeUndefined();
    const listed = await api.get("/v1/proxy-users");
    expect(JSON.stringify(listed.json)).not.toContain(created.json.password);
    expect(JSON.stringify(api.server.control.snapshot())).not.toContain(created.json.password);
  });

  it("keeps names unique (409 conflict) and lets a deleted name be reused", async () => {
    api = await startApi();
    const first = await api.createUser("dup");
    const again = await api.post("/v1/proxy-users", { name: "dup" });
    expectError(again, 409, "conflict");
    expect(again.json.error.details).toEqual({ field: "name" });
    expect((await api.delete(`/v1/proxy-users/${first.id}`)).status).toBe(204);
    expect((await api.post("/v1/proxy-users", { name: "dup" })).status).toBe(201);
  });

  it("validates strictly, naming the field", async () => {
    api = await startApi();
    const cases: [unknown, string][] = [
      [{ name: "Upper" }, "name"],
      [{ name: "9lives" }, "name"],
      [{ name: "a".repeat(64) }, "name"],
      [{ name: "ok", nickname: "x" }, "nickname"],
      [{ name: "ok", limits: { daily_gb: -1 } }, "limits.daily_gb"],
      [{ name: "ok", limits: { monthly_gb: 100_001 } }, "limits.monthly_gb"],
      [{ name: "ok", limits: { daily_gb: 1.2345 } }, "limits.daily_gb"],
      [{ name: "ok", limits: { daily_gb: 10, monthly_gb: 5 } }, "limits.daily_gb"],
      [{ name: "ok", limits: { hourly_gb: 1 } }, "limits.hourly_gb"],
      [{ name: "ok", enabled: "yes" }, "enabled"],
      [[1, 2], "(body)"],
    ];
    for (const [body, path] of cases) {
      const refused = await api.post("/v1/proxy-users", body);
      expectError(refused, 400, "invalid_request");
      expect(
        refused.json.error.details.issues.map((issue: { path: string }) => issue.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    const unknown = await api.post("/v1/proxy-users", { name: "ok", nickname: "x" });
    expect(unknown.json.error.details.issues[0].message).toContain("nickname");
    expect((await api.get("/v1/proxy-users")).json.proxy_users).toEqual([]);
  });

  it("PATCH may carry one ceiling, keeps the other, and checks daily ≤ monthly after the merge", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock });
    const user = await api.createUser("limited", { limits: { daily_gb: 5, monthly_gb: 50 } });
    clock.advance(1000);
    const monthly = await api.patch(`/v1/proxy-users/${user.id}`, { limits: { monthly_gb: 100 } });
    expect(monthly.json.limits).toEqual({ daily_gb: 5, monthly_gb: 100 });
    expect(monthly.json.updated_at).toBe(new Date(T0 + 1000).toISOString());
    const tooHigh = await api.patch(`/v1/proxy-users/${user.id}`, { limits: { daily_gb: 101 } });
    expectError(tooHigh, 400, "invalid_request");
    expect(tooHigh.json.error.details.issues).toEqual([
      { path: "limits.daily_gb", message: "must not exceed monthly_gb (100)" },
    ]);
    const cleared = await api.patch(`/v1/proxy-users/${user.id}`, { limits: { monthly_gb: null } });
    expect(cleared.json.limits).toEqual({ daily_gb: 5, monthly_gb: null });
    const both = await api.patch(`/v1/proxy-users/${user.id}`, { limits: { daily_gb: 0.125 }, enabled: false });
    expect(both.json).toMatchObject({ limits: { daily_gb: 0.125, monthly_gb: null }, enabled: false });
    expectError(await api.patch(`/v1/proxy-users/${user.id}`, { name: "renamed" }), 400, "invalid_request");
    expectError(await api.patch("/v1/proxy-users/pu_missing123", { enabled: true }), 404, "not_found");
  });

  it("disables at once, idempotently, and re-enables through PATCH", async () => {
    api = await startApi();
    const user = await api.createUser("flaky");
    const disabled = await api.post(`/v1/proxy-users/${user.id}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.json.enabled).toBe(false);
    const again = await api.post(`/v1/proxy-users/${user.id}/disable`, {});
    expect(again.status).toBe(200);
    expect(again.json.updated_at).toBe(disabled.json.updated_at);
    expectError(await api.post(`/v1/proxy-users/${user.id}/disable`, { now: true }), 400, "invalid_request");
    expect((await api.patch(`/v1/proxy-users/${user.id}`, { enabled: true })).json.enabled).toBe(true);
    expectError(await api.post("/v1/proxy-users/pu_missing123/disable"), 404, "not_found");
  });

  it("deletes with 204, and an unknown id is a 404", async () => {
    api = await startApi();
    const user = await api.createUser("gone");
    expect((await api.delete(`/v1/proxy-users/${user.id}`)).status).toBe(204);
    expectError(await api.get(`/v1/proxy-users/${user.id}`), 404, "not_found");
    expectError(await api.delete(`/v1/proxy-users/${user.id}`), 404, "not_found");
    expectError(await api.get("/v1/proxy-users/not-an-id"), 404, "not_found");
  });

  it("filters the list on enabled", async () => {
    api = await startApi();
    const on = await api.createUser("on");
    const off = await api.createUser("off", { enabled: false });
    const ids = async (query: string) =>
      (await api.get(`/v1/proxy-users${query}`)).json.proxy_users.map((u: { id: string }) => u.id);
    expect(await ids("?enabled=true")).toEqual([on.id]);
    expect(await ids("?enabled=false")).toEqual([off.id]);
    expect(await ids("")).toEqual([on.id, off.id]);
    const bad = await api.get("/v1/proxy-users?enabled=yes");
    expectError(bad, 400, "invalid_request");
    expect(bad.json.error.details.issues[0].path).toBe("enabled");
  });
});

describe("pagination", () => {
  it("validates limit and cursor", async () => {
    api = await startApi();
    for (const query of [
      "limit=0",
      "limit=201",
      "limit=abc",
      "limit=1.5",
      "cursor=bm9wZQ",
      "limit=1&limit=2",
      "colour=red",
    ]) {
      const refused = await api.get(`/v1/proxy-users?${query}`);
      expectError(refused, 400, "invalid_request");
    }
    expect((await api.get("/v1/proxy-users?limit=200")).status).toBe(200);
  });

  it("defaults to 50 per page", async () => {
    api = await startApi({ rateLimitPerMinute: 10_000 });
    for (let i = 0; i < 51; i++) await api.createUser(`u${i}`);
    const first = await api.get("/v1/proxy-users");
    expect(first.json.proxy_users).toHaveLength(50);
    const second = await api.get(`/v1/proxy-users?cursor=${first.json.next_cursor}`);
    expect(second.json.proxy_users).toHaveLength(1);
    expect(second.json.next_cursor).toBeNull();
  });

  it("is stable under creates and deletes interleaved with the walk: no repeats, no skips", async () => {
    api = await startApi({ rateLimitPerMinute: 10_000 });
    const initial: string[] = [];
    for (let i = 0; i < 25; i++) initial.push((await api.createUser(`base-${i}`)).id);
    const doomed = new Set([initial[5], initial[11]]);
    const seen: string[] = [];
    const createdDuring: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { json: { proxy_users: { id: string }[]; next_cursor: string | null } } = await api.get(
        `/v1/proxy-users?limit=4${cursor ? `&cursor=${cursor}` : ""}`,
      );
      seen.push(...page.json.proxy_users.map((user) => user.id));
      cursor = page.json.next_cursor;
      pages++;
      // Concurrent writers: two creates and, once, deletions of items not yet reached.
      const [a, b] = await Promise.all([api.createUser(`during-${pages}-a`), api.createUser(`during-${pages}-b`)]);
      createdDuring.push(a.id, b.id);
      if (pages === 1) for (const id of doomed) expect((await api.delete(`/v1/proxy-users/${id}`)).status).toBe(204);
      if (pages > 40) break;
    } while (cursor !== null);
    expect(cursor).toBeNull();
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of initial) if (!doomed.has(id)) expect(seen).toContain(id);
    for (const id of doomed) expect(seen).not.toContain(id);
    expect(seen.filter((id) => createdDuring.includes(id)).length).toBeGreaterThan(0);
  });
});
