import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKey, IpAllocation, ProxyUser } from "../../provider";
import { type ProviderFixture, providerFixture } from "../support/fixture";

/**
 * Outputs the API has no value for (no replacement yet, no expiry, no password for an adopted user)
 * must read as known in a preview: an output the provider never set shows as `[unknown]`, so every
 * preview of an unchanged stack would list changes.
 */
describe("a preview of an unchanged stack", () => {
  let adoptId = "";
  let fixture: ProviderFixture;

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const ip = new IpAllocation("de-1", { product: "isp", country: "de" });
      const key = new ApiKey("ci", { name: "ci-usage", scopes: ["usage:read"] });
      const user = new ProxyUser("legacy", { name: "legacy", adoptId }, { retainOnDelete: true });
      return {
        ip: { address: ip.ip, last: ip.lastReplacedIp, charge: ip.lastReplacementChargeCents },
        key: { id: key.keyId, expiresAt: key.expiresAt, rotated: key.lastRotatedAt },
        user: { id: user.proxyUserId, limits: user.limits, password: user.password },
      };
    });
  });
  afterAll(() => fixture?.cleanup());

  it("shows no change, not even to outputs the provider never set", async () => {
    const { stack, api } = fixture;
    adoptId = (await api.proxyUsers.create({ name: "legacy" })).id;
    const created = await stack.up();
    expect(created.outputs.ip?.value).toMatchObject({ address: expect.stringMatching(/^198\.51\.100\./) });

    const preview = await stack.preview({ diff: true });
    expect(preview.changeSummary).toEqual({ same: 4 });
    expect(preview.stdout).not.toMatch(/unknown/);
    expect(preview.stdout).not.toMatch(/^\s*[~+-] /m);
  });
});
