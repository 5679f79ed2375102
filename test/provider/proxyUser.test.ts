import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyUser } from "../../provider";
import { driftedResources, type ProviderFixture, providerFixture } from "../support/fixture";

describe("ProxyUser through the engine", () => {
  let limits = { dailyGb: 5, monthlyGb: 100 };
  const name = "scraper";
  let reenableTrigger: string | undefined;
  let fixture: ProviderFixture;

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const user = new ProxyUser("scraper", {
        name,
        limits,
        enabled: true,
        ...(reenableTrigger ? { reenableTrigger } : {}),
      });
      return { id: user.id, password: user.password, enabled: user.enabled, disabledOutOfBand: user.disabledOutOfBand };
    });
  });
  afterAll(() => fixture?.cleanup());

  it("runs the whole lifecycle against the reference server", async () => {
    const { stack, api } = fixture;
    const created = await stack.up();
    const id = created.outputs.id?.value as string;
    expect(created.outputs.password?.secret).toBe(true);
    expect(await api.proxyUsers.get(id)).toMatchObject({
      name: "scraper",
      limits: { daily_gb: 5, monthly_gb: 100 },
      enabled: true,
    });

    expect((await stack.preview()).changeSummary).toEqual({ same: 2 });

    limits = { dailyGb: 10, monthlyGb: 100 };
    const updated = await stack.up();
    expect(updated.summary.resourceChanges).toMatchObject({ update: 1 });
    // The harness reads a run's summary at its first use (harness/stackReads.ts): the first up's, never
    // read, is not answered from the state the second up left.
    expect(() => created.summary.resourceChanges).toThrow(/first read after a later run changed the stack/);
    expect((await api.proxyUsers.get(id)).limits.daily_gb).toBe(10);

    await api.proxyUsers.update(id, { limits: { monthly_gb: 50 } });
    expect(await driftedResources(fixture)).toEqual(new Map([["scraper", ["limits.monthlyGb"]]]));
    await stack.up({ refresh: true });
    expect((await api.proxyUsers.get(id)).limits).toEqual({ daily_gb: 10, monthly_gb: 100 });
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 2 });

    // An emergency disable outside Pulumi holds against `enabled: true` until the trigger changes.
    await api.proxyUsers.update(id, { enabled: false });
    const held = await stack.up({ refresh: true });
    expect(held.outputs.disabledOutOfBand?.value).toBe(true);
    expect((await api.proxyUsers.get(id)).enabled).toBe(false);
    reenableTrigger = "incident-1-closed";
    const reenabled = await stack.up({ refresh: true });
    expect(reenabled.outputs.enabled?.value).toBe(true);
    expect(reenabled.outputs.disabledOutOfBand?.value).toBe(false);
    expect((await api.proxyUsers.get(id)).enabled).toBe(true);

    await stack.destroy();
    expect(fixture.server.control.snapshot().proxyUsers).toEqual([]);
  });
});
