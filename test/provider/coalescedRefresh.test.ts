import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyUser } from "../../provider";
import { type ProviderFixture, providerFixture } from "../support/fixture";

const COUNT = 40;
/** Above the stack's size, so the engine sends every read of a refresh at once, as the benchmarks run. */
const PARALLEL = 100;

interface Recorded {
  name: string;
  outputs: Record<string, unknown>;
}

async function recordedUsers(fixture: ProviderFixture): Promise<Map<string, Recorded["outputs"]>> {
  const { deployment } = await fixture.stack.exportStack();
  const users = (deployment.resources as (Recorded & { urn: string; type: string })[]).filter((resource) =>
    resource.type.endsWith(":ProxyUser"),
  );
  return new Map(users.map((resource) => [resource.urn.split("::").pop()!, resource.outputs]));
}

describe("many proxy users refreshed at once (reads answered from shared list pages)", () => {
  let fixture: ProviderFixture;

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const users = Array.from(
        { length: COUNT },
        (_, i) => new ProxyUser(`user-${i}`, { name: `fleet-${i}`, limits: { dailyGb: 1, monthlyGb: 10 } }),
      );
      return { ids: users.map((user) => user.id) };
    });
  });
  afterAll(() => fixture?.cleanup());

  it("reports exactly the out-of-band changes, drops deleted users, and costs a few requests instead of one per user", async () => {
    const { stack, api, server } = fixture;
    server.resetStats();
    const ids = (await stack.up({ parallel: PARALLEL })).outputs.ids?.value as string[];
    const afterUp = server.stats().byRoute;
    expect(afterUp["POST /v1/proxy-users"]).toBe(COUNT);
    // The re-read that follows each create never costs more than the GET it replaces.
    expect((afterUp["GET /v1/proxy-users"] ?? 0) + (afterUp["GET /v1/proxy-users/{id}"] ?? 0)).toBeLessThanOrEqual(
      COUNT,
    );

    server.resetStats();
    expect((await stack.preview({ parallel: PARALLEL })).changeSummary).toEqual({ same: COUNT + 1 });
    // The one question whether the credentials work (provider/core/credentials.ts), whatever the count.
    expect(server.stats().byRoute).toEqual({ "GET /v1/proxy-users": 1 });

    const before = await recordedUsers(fixture);
    await api.proxyUsers.update(ids[3]!, { limits: { daily_gb: 7 } });
    await api.proxyUsers.disable(ids[20]!);
    await api.proxyUsers.delete(ids[11]!);
    await api.proxyUsers.delete(ids[38]!);

    server.resetStats();
    await stack.refresh({ parallel: PARALLEL });
    const { requests, byRoute } = server.stats();
    // One list page holds all 40; the two deleted users are each confirmed gone by a GET (404). Reads
    // the engine sends late may need a page of their own, so the bound leaves room for a few.
    expect(byRoute["GET /v1/proxy-users/{id}"]).toBe(2);
    expect(requests).toBeLessThanOrEqual(2 + 6);

    const after = await recordedUsers(fixture);
    expect([...before.keys()].filter((name) => !after.has(name)).sort()).toEqual(["user-11", "user-38"]);
    const changed = [...after.keys()].filter(
      (name) => JSON.stringify(after.get(name)) !== JSON.stringify(before.get(name)),
    );
    expect(changed.sort()).toEqual(["user-20", "user-3"]);
    expect(after.get("user-3")).toMatchObject({ limits: { dailyGb: 7, monthlyGb: 10 }, enabled: true });
    expect(after.get("user-20")).toMatchObject({ enabled: false, disabledOutOfBand: true });

    server.resetStats();
    await stack.refresh({ parallel: PARALLEL });
    expect(server.stats().requests).toBeLessThanOrEqual(6);
    expect(await recordedUsers(fixture)).toEqual(after);
    await stack.destroy({ parallel: PARALLEL });
  });
});
