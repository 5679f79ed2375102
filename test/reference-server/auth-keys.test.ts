import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../server";
import { HOUR_MS, MINUTE_MS } from "../../server/clock";
import { type Api, expectError, startApi, T0 } from "./harness";

let api: Api;
afterEach(() => api?.server.close());

describe("authentication", () => {
  it("answers 401 unauthenticated to a missing or malformed header, and invalid_api_key to an unknown secret", async () => {
    api = await startApi();
    expectError(await api.get("/v1/proxy-users", { key: null }), 401, "unauthenticated");
    expectError(
      await api.get("/v1/proxy-users", { authorization: `Basic ${api.server.rootKey}` }),
      401,
      "unauthenticated",
    );
    expectError(await api.get("/v1/proxy-users", { authorization: "Bearer" }), 401, "unauthenticated");
    expectError(await api.get("/v1/proxy-users", { key: "live_short" }), 401, "unauthenticated");
    expectError(
      await api.get("/v1/proxy-users", { key: "test_0123456789012345678901234567890123" }),
      401,
      "unauthenticated",
    );
    const unknown = `live_${"A".repeat(40)}`;
    const refused = await api.get("/v1/proxy-users", { key: unknown });
    expectError(refused, 401, "invalid_api_key");
    expect(JSON.stringify(refused.json)).not.toContain(unknown);
    expect(refused.headers["x-ratelimit-limit"]).toBeUndefined();
    expect((await api.get("/v1/proxy-users", { authorization: `bearer  ${api.server.rootKey}` })).status).toBe(200);
  });

  it("refuses a key past its expiry the moment it expires", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock });
    const expiresAt = new Date(T0 + HOUR_MS).toISOString();
    const created = await api.post("/v1/keys", { name: "short-lived", scopes: ["usage:read"], expires_at: expiresAt });
    expect(created.status).toBe(201);
    expect(created.json.expires_at).toBe(expiresAt);
    const usage = "/v1/usage?from=2025-03-01&to=2025-03-31";
    clock.advance(HOUR_MS - 1);
    expect((await api.get(usage, { key: created.json.secret })).status).toBe(200);
    clock.advance(1);
    expectError(await api.get(usage, { key: created.json.secret }), 401, "invalid_api_key");
    const past = await api.post("/v1/keys", {
      name: "stale",
      scopes: ["usage:read"],
      expires_at: new Date(T0).toISOString(),
    });
    expectError(past, 400, "invalid_request");
    expect(past.json.error.details.issues[0].path).toBe("expires_at");
  });
});

describe("API keys", () => {
  it("shows the secret only in the create answer, keeps a hint, and lists without secrets", async () => {
    api = await startApi();
    const created = await api.post("/v1/keys", { name: "ci", scopes: ["usage:read", "proxy-users:read"] });
    expect(created.status).toBe(201);
    expect(created.json.id).toMatch(/^key_/);
    expect(created.json.secret).toMatch(/^live_[A-Za-z0-9]{32,}$/);
    expect(created.json.secret_hint).toBe(created.json.secret.slice(-4));
    expect(created.json).toMatchObject({
      name: "ci",
      last_rotated_at: null,
      previous_secret_expires_at: null,
      expires_at: null,
    });
    const listed = await api.get("/v1/keys");
    expect(listed.json.keys.map((key: { id: string }) => key.id)).toContain(created.json.id);
    expect(JSON.stringify(listed.json)).not.toContain(created.json.secret);
    const got = await api.get(`/v1/keys/${created.json.id}`);
    expect(got.json.secret).toBeUndefined();
    expectError(await api.get("/v1/keys/key_doesnotexist"), 404, "not_found");
  });

  it("validates scopes: known, non-empty, no duplicates", async () => {
    api = await startApi();
    const unknown = await api.post("/v1/keys", { name: "x", scopes: ["admin"] });
    expectError(unknown, 400, "invalid_request");
    expect(unknown.json.error.details.issues[0].path).toBe("scopes.0");
    expectError(await api.post("/v1/keys", { name: "x", scopes: [] }), 400, "invalid_request");
    expectError(
      await api.post("/v1/keys", { name: "x", scopes: ["usage:read", "usage:read"] }),
      400,
      "invalid_request",
    );
  });

  it("rotation: both secrets work during grace, the old one fails the moment grace ends", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock, rateLimitPerMinute: 10_000 });
    const key = api.server.control.createKey({ name: "rotating", scopes: ["proxy-users:read"] });
    const rotated = await api.post(`/v1/keys/${key.id}/rotate`, { grace_hours: 2 });
    expect(rotated.status).toBe(200);
    expect(rotated.json.secret).not.toBe(key.secret);
    expect(rotated.json.last_rotated_at).toBe(new Date(T0).toISOString());
    expect(rotated.json.previous_secret_expires_at).toBe(new Date(T0 + 2 * HOUR_MS).toISOString());
    expect(rotated.json.secret_hint).toBe(rotated.json.secret.slice(-4));
    clock.advance(2 * HOUR_MS - 1);
    expect((await api.get("/v1/proxy-users", { key: key.secret })).status).toBe(200);
    expect((await api.get("/v1/proxy-users", { key: rotated.json.secret })).status).toBe(200);
    clock.advance(1);
    expectError(await api.get("/v1/proxy-users", { key: key.secret }), 401, "invalid_api_key");
    expect((await api.get("/v1/proxy-users", { key: rotated.json.secret })).status).toBe(200);
    expect((await api.get(`/v1/keys/${key.id}`)).json.previous_secret_expires_at).toBeNull();
  });

  it("rotation defaults to 24 hours of grace, and grace 0 retires the old secret at once", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock });
    const key = api.server.control.createKey({ name: "k", scopes: ["proxy-users:read"] });
    const rotated = await api.post(`/v1/keys/${key.id}/rotate`);
    expect(rotated.json.previous_secret_expires_at).toBe(new Date(T0 + 24 * HOUR_MS).toISOString());
    const immediate = await api.post(`/v1/keys/${key.id}/rotate`, { grace_hours: 0 });
    expect(immediate.json.previous_secret_expires_at).toBeNull();
    expectError(await api.get("/v1/proxy-users", { key: rotated.json.secret }), 401, "invalid_api_key");
    expect((await api.get("/v1/proxy-users", { key: immediate.json.secret })).status).toBe(200);
  });

  it.each([
    [169, "at most 168"],
    [-1, "at least 0"],
    [1.5, "whole number"],
  ])("grace_hours %s is a 400 naming the bound", async (graceHours, bound) => {
    api = await startApi();
    const key = api.server.control.createKey({ name: "k", scopes: ["usage:read"] });
    const refused = await api.post(`/v1/keys/${key.id}/rotate`, { grace_hours: graceHours });
    expectError(refused, 400, "invalid_request");
    expect(refused.json.error.details.issues[0]).toMatchObject({ path: "grace_hours" });
    expect(refused.json.error.details.issues[0].message).toContain(bound);
    expect((await api.get(`/v1/keys/${key.id}`)).json.last_rotated_at).toBeNull();
  });

  it("a second rotation ends the first grace period at once: at most two secrets are valid", async () => {
    const clock = new ManualClock(T0);
    api = await startApi({ clock });
    const key = api.server.control.createKey({ name: "k", scopes: ["proxy-users:read"] });
    const second = await api.post(`/v1/keys/${key.id}/rotate`, { grace_hours: 168 });
    clock.advance(MINUTE_MS);
    const third = await api.post(`/v1/keys/${key.id}/rotate`, { grace_hours: 168 });
    const statuses = await Promise.all(
      [key.secret, second.json.secret, third.json.secret].map(
        async (secret) => (await api.get("/v1/proxy-users", { key: secret })).status,
      ),
    );
    expect(statuses).toEqual([401, 200, 200]);
  });

  it("revocation makes every secret of the key fail at once", async () => {
    api = await startApi();
    const key = api.server.control.createKey({ name: "doomed", scopes: ["proxy-users:read"] });
    const rotated = await api.post(`/v1/keys/${key.id}/rotate`, { grace_hours: 24 });
    expect((await api.get("/v1/proxy-users", { key: key.secret })).status).toBe(200);
    const revoked = await api.delete(`/v1/keys/${key.id}`);
    expect(revoked.status).toBe(204);
    expect(revoked.json).toBeUndefined();
    expectError(await api.get("/v1/proxy-users", { key: key.secret }), 401, "invalid_api_key");
    expectError(await api.get("/v1/proxy-users", { key: rotated.json.secret }), 401, "invalid_api_key");
    expectError(await api.get(`/v1/keys/${key.id}`), 404, "not_found");
    expectError(await api.delete(`/v1/keys/${key.id}`), 404, "not_found");
  });

  it("keeps secrets out of the state it holds: only hashes and the hint", async () => {
    api = await startApi();
    const created = await api.post("/v1/keys", { name: "ci", scopes: ["usage:read"] });
    const snapshot = JSON.stringify(api.server.control.snapshot());
    expect(snapshot).not.toContain(created.json.secret);
    expect(snapshot).not.toContain(api.server.rootKey);
    expect(snapshot).toContain(created.json.secret.slice(-4));
  });
});
