import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IpAllocation } from "../../provider";
import { driftedResources, type ProviderFixture, providerFixture } from "../support/fixture";

describe("IpAllocation through the engine", () => {
  let args: ConstructorParameters<typeof IpAllocation>[1] = { product: "isp", country: "de", city: "berlin" };
  let fixture: ProviderFixture;

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const ip = new IpAllocation("de-1", args);
      return {
        id: ip.id,
        ip: ip.ip,
        asn: ip.asn,
        city: ip.city,
        health: ip.health,
        blacklists: ip.blacklists,
        free: ip.freeReplacementsRemaining,
        charged: ip.lastReplacementChargeCents,
      };
    });
  });
  afterAll(() => fixture?.cleanup());

  it("allocates, replaces in place within the free allowance and the charge ceiling, and releases", async () => {
    const { stack, api, server } = fixture;
    const created = await stack.up();
    const allocationId = created.outputs.id?.value as string;
    const firstIp = created.outputs.ip?.value as string;
    expect(allocationId).toMatch(/^alloc_/);
    expect(firstIp).toMatch(/^198\.51\.100\./);
    expect(created.outputs).toMatchObject({
      asn: { value: "as6805" },
      health: { value: "good" },
      blacklists: { value: 0 },
      free: { value: 2 },
    });
    expect((await stack.preview()).changeSummary).toEqual({ same: 2 });

    // Two free replacements, triggered in place: same allocation id, new address.
    const seen = new Set([firstIp]);
    for (const trigger of ["r1", "r2"]) {
      args = { ...args, replaceTrigger: trigger, replaceReason: "blacklisted", keepCity: true };
      const replaced = await stack.up();
      expect(replaced.summary.resourceChanges).toMatchObject({ update: 1 });
      expect(replaced.outputs.id?.value).toBe(allocationId);
      expect(seen.has(replaced.outputs.ip?.value as string)).toBe(false);
      seen.add(replaced.outputs.ip?.value as string);
      expect(replaced.outputs.charged?.value).toBe(0);
    }

    // The third is charged, so it is refused without a ceiling and nothing changes.
    const balanceBefore = (await api.billing.balance()).balance_cents;
    args = { ...args, replaceTrigger: "r3" };
    await expect(stack.up()).rejects.toThrow(/maxReplacementChargeCents/);
    expect((await api.ips.get(allocationId)).replacements_this_month).toBe(2);
    expect((await api.billing.balance()).balance_cents).toBe(balanceBefore);

    args = { ...args, maxReplacementChargeCents: 300 };
    const charged = await stack.up();
    const chargeCents = charged.outputs.charged?.value as number;
    expect(chargeCents).toBeGreaterThan(0);
    expect(chargeCents).toBeLessThanOrEqual(300);
    expect((await api.billing.balance()).balance_cents).toBe(balanceBefore - chargeCents);

    // Out of band: the address is blacklisted and replaced through the API; the id stays.
    server.control.setIpHealth(allocationId, { health: "bad", blacklists: 3 });
    const outOfBand = await api.ips.replace(allocationId, { reason: "blacklisted", max_charge_cents: 1000 });
    const drift = await driftedResources(fixture);
    expect([...drift.keys()]).toEqual(["de-1"]);
    expect(drift.get("de-1")).toContain("ip");
    // Without keepCity the API took the first free address of the country, in another city: drift too.
    expect(drift.get("de-1")).toContain("city");
    // The count moved too, but it is the service's status (it also resets every month), not drift.
    expect(drift.get("de-1")).not.toContain("replacementsThisMonth");
    const converged = await stack.up({ refresh: true });
    expect(converged.outputs.ip?.value).toBe(outOfBand.allocation.ip);
    // The output says where the address is; the declared city still holds, so nothing is bought again.
    expect(outOfBand.allocation.city).toBe("frankfurt");
    expect(converged.outputs.city?.value).toBe("frankfurt");
    expect(converged.summary.resourceChanges).not.toHaveProperty("create");
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 2 });

    await stack.destroy();
    expect(server.control.snapshot().ips).toEqual([]);
  });
});
