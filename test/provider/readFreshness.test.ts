import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contextFor, type ProviderContext } from "../../provider/core/context";
import { reads as proxyUsers } from "../../provider/kinds/proxyUser/schema";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";

/**
 * The provider's own context (its client counts the writes) reading from the reference server over
 * loopback: what a refresh and a create's re-read see, and what they cost.
 */
describe("coalesced reads against the reference server", () => {
  let server: ReferenceServer;
  let outOfBand: ProxyClient;
  let context: ProviderContext;

  beforeAll(async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    outOfBand = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    const settings = {
      apiUrl: server.url,
      apiKey: server.rootKey,
      apiKeyFrom: "config" as const,
      rateLimitReserve: 0,
      retryWindowSeconds: 120,
      requestTimeoutSeconds: 30,
    };
    context = contextFor(settings, "read-freshness-test", () => {});
  });
  afterAll(() => server?.close());

  it("see what others changed before the reads, answer them with one walk, then from memory, and see the process's own writes", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 450; i++) ids.push((await outOfBand.proxyUsers.create({ name: `fleet-${i}` })).id);
    // Changes made by someone else before the operation began.
    await outOfBand.proxyUsers.update(ids[5]!, { limits: { daily_gb: 7 } });
    await outOfBand.proxyUsers.delete(ids[300]!);

    const { client } = context;
    const reads = { proxyUser: { read: (id: string) => context.read(proxyUsers, id) } };
    const readInEights = async () => {
      const found = [];
      for (let i = 0; i < ids.length; i += 8) {
        found.push(...(await Promise.all(ids.slice(i, i + 8).map((id) => reads.proxyUser.read(id)))));
      }
      return found;
    };
    server.resetStats();
    const refreshed = await readInEights();
    expect(refreshed.filter((user) => user === undefined)).toHaveLength(1);
    expect(refreshed[300]).toBeUndefined();
    expect(refreshed[5]?.limits.daily_gb).toBe(7);
    // Three pages of 200 and one GET confirming the deleted user is gone (404).
    expect(server.stats().byRoute).toEqual({ "GET /v1/proxy-users": 3, "GET /v1/proxy-users/{id}": 1 });

    server.resetStats();
    expect((await readInEights()).map((user) => user?.id)).toEqual(refreshed.map((user) => user?.id));
    expect(server.stats().byRoute["GET /v1/proxy-users"] ?? 0).toBe(0);

    // The process's own write: the page remembered from before it may not answer the read after it.
    await client.proxyUsers.update(ids[7]!, { limits: { daily_gb: 9 } });
    server.resetStats();
    expect((await reads.proxyUser.read(ids[7]!))?.limits.daily_gb).toBe(9);
    // The tail page (sent after the write) does not hold an early user; being alone, it costs a GET, not a walk.
    expect(server.stats().byRoute).toEqual({ "GET /v1/proxy-users": 1, "GET /v1/proxy-users/{id}": 1 });

    // A create's re-read finds it on the tail, with a page sent after the create.
    const created = await client.proxyUsers.create({ name: "late" });
    server.resetStats();
    expect((await reads.proxyUser.read(created.id))?.id).toBe(created.id);
    expect(server.stats().byRoute).toEqual({ "GET /v1/proxy-users": 1 });
  });
});
