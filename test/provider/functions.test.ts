import * as pulumi from "@pulumi/pulumi";
import { afterEach, describe, expect, it } from "vitest";
import {
  getBalance,
  getCharges,
  getIpAllocations,
  getProxyUsers,
  getUsage,
  IpAllocation,
  lookupIpAllocation,
  lookupProxyUser,
  ProxyUser,
} from "../../provider";
import { basic, startOrigin, viaGateway } from "../gateway/harness";
import { type ProviderFixture, providerFixture } from "../support/fixture";

type Outputs = Record<string, { value: unknown; secret: boolean }>;

let fixture: ProviderFixture | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

const today = () => new Date().toISOString().slice(0, 10);

describe("program functions: reads in the program's own process", () => {
  it("look existing objects up to adopt them, and read usage, balance and charges", async () => {
    const held = { ip: "" };
    fixture = await providerFixture(async () => {
      const user = lookupProxyUser({ name: "legacy" });
      const allocation = lookupIpAllocation({ address: held.ip });
      const adopted = new ProxyUser("legacy", { name: "legacy", limits: { dailyGb: 2 }, adoptId: user.id });
      const address = new IpAllocation("legacy-ip", { product: "isp", country: "us", adoptId: allocation.id });
      return {
        found: user,
        allocation,
        adoptedId: adopted.proxyUserId,
        addressId: address.allocationId,
        usage: getUsage({ from: today(), to: today(), proxyUserId: user.id }),
        balance: getBalance(),
        charges: getCharges({ since: `${today()}T00:00:00Z` }),
        users: getProxyUsers({ enabled: true }),
        allocations: getIpAllocations({ product: "isp", country: "us" }),
      };
    });
    const { api, server } = fixture;
    const legacy = await api.proxyUsers.create({ name: "legacy", limits: { daily_gb: 1 } });
    const allocated = await api.ips.allocate({ product: "isp", country: "us" });
    held.ip = allocated.ip;
    const origin = await startOrigin();
    try {
      for (let i = 0; i < 2; i++) {
        const answer = await viaGateway(server.gatewayUrl, `${origin.url}/hello`, basic("legacy", legacy.password));
        expect(answer.status).toBe(200);
      }
    } finally {
      await origin.close();
    }
    const usage = await api.usage.get({ from: today(), to: today(), proxy_user_id: legacy.id });

    const up = await fixture.stack.up();
    const outputs = up.outputs as Outputs;
    // Adoption is a create in the engine's eyes; the account still holds only the objects it had.
    expect(up.summary.resourceChanges).toEqual({ create: 3 });
    expect(server.control.snapshot().proxyUsers).toHaveLength(1);
    expect(server.control.snapshot().ips).toHaveLength(1);
    expect(outputs.found?.value).toMatchObject({
      id: legacy.id,
      username: "legacy",
      limits: { dailyGb: 1, monthlyGb: null },
    });
    expect(outputs.adoptedId?.value).toBe(legacy.id);
    expect(outputs.allocation?.value).toMatchObject({
      id: allocated.id,
      ip: allocated.ip,
      product: "isp",
      health: "good",
    });
    expect(outputs.addressId?.value).toBe(allocated.id);
    expect(outputs.usage?.value).toEqual({
      rows: [{ proxyUserId: legacy.id, periodStart: today(), bytes: usage.totals.bytes, requests: 2 }],
      totals: usage.totals,
    });
    expect(outputs.balance?.value).toEqual({ balanceCents: 10_000 - 300, currency: "usd" });
    expect(outputs.charges?.value).toMatchObject({
      totalCents: 300,
      charges: [{ kind: "ip_allocation", amountCents: 300 }],
    });
    expect(outputs.users?.value).toMatchObject({ proxyUsers: [{ id: legacy.id, name: "legacy" }] });
    expect(outputs.allocations?.value).toMatchObject({ ipAllocations: [{ id: allocated.id }] });
    for (const name of ["found", "usage", "balance", "charges"]) {
      expect(outputs[name]?.secret, `${name}: the API key's secretness does not taint results`).toBe(false);
    }
  });

  it("names the missing scope, and never shows the key, when the key cannot read", async () => {
    let secret = "";
    const explicit = { url: "", key: "" };
    fixture = await providerFixture(async () => ({
      // An explicit provider's credentials, where given, instead of the stack's.
      balance: explicit.key ? getBalance({ apiUrl: explicit.url, apiKey: pulumi.secret(explicit.key) }) : getBalance(),
    }));
    const { stack, server } = fixture;
    secret = server.control.createKey({ name: "usage-only", scopes: ["usage:read"] }).secret;
    await stack.setConfig("proxy:apiKey", { value: secret, secret: true });
    const failure = await stack.up().then(
      () => "no failure",
      (error: unknown) => String(error),
    );
    expect(failure).toMatch(/getBalance: cannot read the balance: the API key in proxy:apiKey lacks billing:read/);
    expect(failure).not.toContain(secret);
    expect(failure).not.toContain(server.rootKey);

    Object.assign(explicit, { url: server.url, key: server.rootKey });
    const outputs = (await stack.up()).outputs as Outputs;
    expect(outputs.balance?.value).toEqual({ balanceCents: 10_000, currency: "usd" });
    expect(outputs.balance?.secret, "the explicit key's secretness does not taint the result").toBe(false);
  });

  it("falls back to PROXY_API_URL and PROXY_API_KEY, and says which setting is missing", async () => {
    fixture = await providerFixture(async () => ({
      balance: getBalance(),
      missing: lookupProxyUser({ name: "ghost" }),
    }));
    const { stack, server } = fixture;
    await stack.removeConfig("proxy:apiUrl");
    await stack.removeConfig("proxy:apiKey");
    const saved = { url: process.env.PROXY_API_URL, key: process.env.PROXY_API_KEY };
    try {
      delete process.env.PROXY_API_URL;
      delete process.env.PROXY_API_KEY;
      const unconfigured = await stack.up().then(() => "no failure", String);
      expect(unconfigured).toMatch(/no API URL is configured\. Run `pulumi config set proxy:apiUrl/);

      process.env.PROXY_API_URL = server.url;
      process.env.PROXY_API_KEY = server.rootKey;
      const absent = await stack.up().then(() => "no failure", String);
      expect(absent).toContain(
        `lookupProxyUser: cannot look up a proxy user: no proxy user is named "ghost" on the account of the key in PROXY_API_KEY at ${server.url}`,
      );
      expect(absent).not.toContain(server.rootKey);
    } finally {
      for (const [name, value] of [
        ["PROXY_API_URL", saved.url],
        ["PROXY_API_KEY", saved.key],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("give up on an API that is down after proxy:retryWindowSeconds, as the resources do", async () => {
    fixture = await providerFixture(async () => ({ balance: getBalance() }));
    await fixture.stack.setConfig("proxy:apiUrl", { value: "http://127.0.0.1:1" });
    await fixture.stack.setConfig("proxy:retryWindowSeconds", { value: "2" });
    const started = Date.now();
    const failure = await fixture.stack.up().then(() => "no failure", String);
    expect(failure).toMatch(/getBalance: cannot read the balance: the API did not answer/);
    expect(failure).toContain("proxy:retryWindowSeconds sets how long each request is tried first");
    // The default would have retried for two minutes before this up could fail.
    expect(Date.now() - started).toBeLessThan(60_000);
  });
});
