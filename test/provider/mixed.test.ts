import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKey, IpAllocation, ProxyUser } from "../../provider";
import { driftedResources, type ProviderFixture, providerFixture } from "../support/fixture";

describe("a mixed stack of all three resources", () => {
  let scraperLimits = { dailyGb: 5, monthlyGb: 100 };
  let reenableTrigger: string | undefined;
  let fixture: ProviderFixture;

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const scraper = new ProxyUser("scraper", { name: "scraper", limits: scraperLimits, enabled: true });
      const crawler = new ProxyUser("crawler", {
        name: "crawler",
        limits: { monthlyGb: 50 },
        enabled: true,
        ...(reenableTrigger ? { reenableTrigger } : {}),
      });
      const ci = new ApiKey("ci", { name: "ci-usage", scopes: ["usage:read"] });
      const ip = new IpAllocation("de-1", { product: "isp", country: "de", city: "berlin" });
      return {
        scraper: scraper.id,
        crawler: crawler.id,
        crawlerEnabled: crawler.enabled,
        held: crawler.disabledOutOfBand,
        ci: ci.id,
        ip: ip.id,
      };
    });
  });
  afterAll(() => fixture?.cleanup());

  it("reports exactly the out-of-band changes, converges, and never silently re-enables a disabled user", async () => {
    const { stack, api, server } = fixture;
    const created = await stack.up();
    expect(created.summary.resourceChanges).toMatchObject({ create: 5 });
    const ids = Object.fromEntries(Object.entries(created.outputs).map(([key, output]) => [key, output.value]));
    expect((await stack.preview()).changeSummary).toEqual({ same: 5 });

    scraperLimits = { dailyGb: 8, monthlyGb: 100 };
    expect((await stack.up()).summary.resourceChanges).toMatchObject({ update: 1, same: 4 });

    // Out of band: a limit, an emergency disable, a revoked key, a replaced address.
    await api.proxyUsers.update(ids.scraper, { limits: { daily_gb: 1 } });
    await api.proxyUsers.disable(ids.crawler);
    await api.keys.revoke(ids.ci);
    await api.ips.replace(ids.ip, { reason: "slow" });

    const drift = await driftedResources(fixture);
    expect([...drift.keys()].sort()).toEqual(["ci", "crawler", "de-1", "scraper"]);
    expect(drift.get("scraper")).toContain("limits.dailyGb");
    expect(drift.get("crawler")).toEqual(expect.arrayContaining(["enabled", "disabledOutOfBand"]));
    expect(drift.get("ci")).toEqual(["deleted"]);
    expect(drift.get("de-1")).toContain("ip");

    const converged = await stack.up({ refresh: true });
    expect((await api.proxyUsers.get(ids.scraper)).limits.daily_gb).toBe(8);
    expect(converged.outputs.ci?.value).not.toBe(ids.ci);
    // The emergency disable holds: up reports it and leaves the user disabled.
    expect(converged.outputs.crawlerEnabled?.value).toBe(false);
    expect(converged.outputs.held?.value).toBe(true);
    expect((await api.proxyUsers.get(ids.crawler)).enabled).toBe(false);
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 5 });

    // Acknowledging re-enables it.
    reenableTrigger = "incident-42-closed";
    const reenabled = await stack.up();
    expect(reenabled.outputs.crawlerEnabled?.value).toBe(true);
    expect(reenabled.outputs.held?.value).toBe(false);
    expect((await api.proxyUsers.get(ids.crawler)).enabled).toBe(true);
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 5 });

    await stack.destroy();
    const left = server.control.snapshot();
    expect({ users: left.proxyUsers, ips: left.ips, keys: left.keys.length }).toEqual({ users: [], ips: [], keys: 1 });
  });
});
