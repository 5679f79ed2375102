import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKey, IpAllocation, ProxyUser } from "../../provider";
import { type ProviderFixture, providerFixture } from "../support/fixture";

describe("adopting existing objects with adoptId (dynamic providers have no pulumi import)", () => {
  const adopt = { userId: "", keyId: "", allocationIp: "" };
  const requests: string[] = [];
  let fixture: ProviderFixture;

  beforeAll(async () => {
    fixture = await providerFixture(
      async () => {
        const user = new ProxyUser(
          "legacy",
          { name: "legacy", limits: { dailyGb: 3, monthlyGb: 30 }, adoptId: adopt.userId },
          { retainOnDelete: true },
        );
        const key = new ApiKey("legacy-key", {
          name: "dashboard-key",
          scopes: ["proxy-users:read"],
          adoptId: adopt.keyId,
        });
        const ip = new IpAllocation("legacy-ip", { product: "dedicated", country: "gb", adoptId: adopt.allocationIp });
        return { user: user.id, key: key.id, ip: ip.id, limits: user.limits, city: ip.city };
      },
      { log: (line) => requests.push(line) },
    );
  });
  afterAll(() => fixture?.cleanup());

  it("takes over objects by id without creating any, aligns them to the inputs, and honours retainOnDelete", async () => {
    const { stack, api } = fixture;
    const user = await api.proxyUsers.create({ name: "legacy", limits: { daily_gb: 1, monthly_gb: 30 } });
    const key = fixture.server.control.createKey({ name: "dashboard-key", scopes: ["proxy-users:read"] });
    const allocation = await api.ips.allocate({ product: "dedicated", country: "gb" });
    Object.assign(adopt, { userId: user.id, keyId: key.id, allocationIp: allocation.ip });

    requests.length = 0;
    const adopted = await stack.up();
    expect(adopted.outputs).toMatchObject({
      user: { value: user.id },
      key: { value: key.id },
      ip: { value: allocation.id },
      limits: { value: { dailyGb: 3, monthlyGb: 30 } },
      city: { value: "london" },
    });
    const writes = requests
      .map((line) => line.split(" ").slice(1, 3).join(" "))
      .filter((call) => !call.startsWith("GET"));
    expect(writes).toEqual([`PATCH /v1/proxy-users/${user.id}`]);
    expect((await api.proxyUsers.get(user.id)).limits.daily_gb).toBe(3);
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 4 });

    await stack.destroy();
    expect((await api.proxyUsers.get(user.id)).name).toBe("legacy");
    await expect(api.keys.get(key.id)).rejects.toMatchObject({ status: 404 });
    await expect(api.ips.get(allocation.id)).rejects.toMatchObject({ status: 404 });
  });

  it("refuses to adopt an object that does not match the inputs, naming the fix", async () => {
    const other = await fixture.api.proxyUsers.create({ name: "someone-else" });
    // The key and address adopted above were destroyed with the stack; adopt live ones, so that the
    // user is the only refusal whichever step the engine starts first.
    const key = fixture.server.control.createKey({ name: "dashboard-key", scopes: ["proxy-users:read"] });
    const allocation = await fixture.api.ips.allocate({ product: "dedicated", country: "gb" });
    Object.assign(adopt, { userId: other.id, keyId: key.id, allocationIp: allocation.ip });
    await expect(fixture.stack.preview().then(() => fixture.stack.up())).rejects.toThrow(
      /adoptId pu_\w+ is the proxy user "someone-else". Set name to "someone-else"/,
    );
  });
});
