import { afterEach, describe, expect, it } from "vitest";
import { SCOPES } from "../../contract/keys";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { authenticate, SecretHasher } from "../../server/auth";
import { FailedAuthentications } from "../../server/authFailures";
import { ManualClock } from "../../server/clock";
import { createKey } from "../../server/handlers/keys";
import { loadStore } from "../../server/store";
import { newSecret } from "../../server/tokens";
import { openSocket, rawRequest } from "./rawHttp";

let server: ReferenceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** 2025-03-10T12:00:10Z: ten seconds into a minute, so a test's requests share one window. */
const T0 = Date.UTC(2025, 2, 10, 12, 0, 10);

describe("the API port under slow clients", () => {
  it("closes a connection whose headers are not in within the header timeout, silent or half a request line", async () => {
    server = await startReferenceServer({ headerTimeoutMs: 200 });
    const half = await openSocket(server.url);
    half.on("error", () => {});
    half.resume();
    half.write("GET /v1/proxy-us");
    const silent = await openSocket(server.url);
    silent.on("error", () => {});
    silent.resume();
    // Node's own default would keep them 60 s and more; the test gives them far less than that.
    await expect.poll(() => half.destroyed, { timeout: 20_000 }).toBe(true);
    await expect.poll(() => silent.destroyed, { timeout: 20_000 }).toBe(true);
    // An ordinary request on a fresh connection is served as before.
    const answer = await rawRequest(server.url, "GET", "/v1/keys", { authorization: `Bearer ${server.rootKey}` });
    expect(answer.status).toBe(200);
  });

  it("refuses a bad header timeout", async () => {
    await expect(startReferenceServer({ headerTimeoutMs: 0 })).rejects.toThrow(/headerTimeoutMs/);
  });
});

describe("wrong keys", () => {
  it("are not kept: only secrets that proved a key are remembered", () => {
    const store = loadStore(undefined, 0);
    const { secret } = createKey(store, T0, { name: "k", scopes: [...SCOPES], expiresAt: null });
    const hasher = new SecretHasher();
    for (let i = 0; i < 50; i++) {
      const wrong = `live_${"x".repeat(14_000)}${i}`;
      expect(() => authenticate(`Bearer ${wrong}`, store, hasher, T0)).toThrow(/unknown, revoked or expired/);
      expect(() => authenticate(`Bearer ${newSecret()}`, store, hasher, T0)).toThrow(/unknown/);
    }
    expect(hasher.size).toBe(0);
    expect(authenticate(`Bearer ${secret}`, store, hasher, T0).key.name).toBe("k");
    expect(hasher.size).toBe(1);
  });

  it("are bounded per address: past the budget, 429 with retry-after before any secret is checked", async () => {
    const clock = new ManualClock(T0);
    server = await startReferenceServer({ clock, failedAuthPerMinute: 5 });
    const url = server.url;
    const as = (secret: string) => rawRequest(url, "GET", "/v1/keys", { authorization: `Bearer ${secret}` });
    for (let i = 0; i < 5; i++) expect((await as(newSecret())).status).toBe(401);
    const refused = await as(newSecret());
    expect([refused.status, refused.json.error.code]).toEqual([429, "rate_limited"]);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // The right key too: a guesser must not tell it apart while limited.
    expect((await as(server.rootKey)).status).toBe(429);
    expect((await rawRequest(url, "GET", "/v1/keys", {})).status).toBe(429);
    clock.advance(60_000);
    expect((await as(server.rootKey)).status).toBe(200);
  });

  it("a flood from other addresses neither evicts a budget in force nor gets a fresh one", () => {
    const failures = new FailedAuthentications(3, 10);
    for (let i = 0; i < 3; i++) failures.fail("192.0.2.1", T0);
    expect(failures.blockedFor("192.0.2.1", T0)).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 1000; i++) failures.fail(`198.51.100.${i % 256}:${i}`, T0);
    expect(failures.blockedFor("192.0.2.1", T0)).toBeGreaterThanOrEqual(1);
    // The table is full of budgets in force: a new address is refused rather than one forgotten.
    expect(failures.blockedFor("203.0.113.9", T0)).toBeGreaterThanOrEqual(1);
    expect(failures.blockedFor("192.0.2.1", T0 + 60_000)).toBeUndefined();
  });
});
