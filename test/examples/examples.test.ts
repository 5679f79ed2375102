import { afterEach, describe, expect, it } from "vitest";
import { AuthenticationError, PermissionDeniedError, ProxyClient } from "../../sdk";
import { type ExampleFixture, exampleFixture, exists, expectNothingLeft, stackFileOf } from "./harness";

type Output = { value: unknown; secret: boolean };
const value = <T>(outputs: Record<string, Output>, key: string) => outputs[key]?.value as T;

/**
 * These scenarios skip ts-node's type check to save seconds per engine run (`npm test` type-checks
 * every example with tsc); the quickstart runs with it, from the packed tarball, in
 * packInstall.test.ts. The gitops example's lifecycle is checked by test/cli/drift.test.ts.
 */
const TRANSPILE_ONLY = { PULUMI_NODEJS_TRANSPILE_ONLY: "true" };

let fixture: ExampleFixture | undefined;
afterEach(async () => {
  if (!fixture) return;
  const stackFile = stackFileOf(fixture);
  await fixture.cleanup();
  fixture = undefined;
  expect(exists(stackFile), "cleanup leaves no stack file in the example folder").toBe(false);
});

describe("examples, each run from its own folder against the reference server", () => {
  it("scoped-keys: each key works only within its scopes, and one config change rotates every secret", async () => {
    fixture = await exampleFixture("scoped-keys", { "scoped-keys:graceHours": "2" }, TRANSPILE_ONLY);
    const { stack, server } = fixture;
    const first = await stack.up();
    const secrets = value<Record<string, string>>(first.outputs, "secrets");
    expect(first.outputs.secrets?.secret).toBe(true);
    expect(Object.keys(secrets).sort()).toEqual(["dashboards", "finance", "onboarding", "oncall"]);
    const held = server.control.snapshot().keys as { name: string; scopes: string[] }[];
    expect(held.find((key) => key.name === "scoped-oncall")?.scopes.sort()).toEqual([
      "proxy-users:read",
      "proxy-users:write",
    ]);

    const dashboards = new ProxyClient({ baseUrl: server.url, apiKey: secrets.dashboards as string, maxRetries: 0 });
    await expect(dashboards.usage.get({ from: "2025-01-01", to: "2025-01-31" })).resolves.toHaveProperty("totals");
    await expect(dashboards.proxyUsers.list().all()).rejects.toBeInstanceOf(PermissionDeniedError);

    await stack.setConfig("scoped-keys:rotation", { value: "2025-02-01" });
    const rotated = await stack.up();
    expect(rotated.summary.resourceChanges).toMatchObject({ update: 4 });
    const newSecrets = value<Record<string, string>>(rotated.outputs, "secrets");
    const info = value<Record<string, { lastRotatedAt: string | null; previousSecretExpiresAt: string }>>(
      rotated.outputs,
      "keyInfo",
    );
    for (const name of Object.keys(secrets)) {
      expect(newSecrets[name]).not.toBe(secrets[name]);
      expect(info[name]?.lastRotatedAt).not.toBeNull();
    }
    const hoursOfGrace = (Date.parse(info.dashboards?.previousSecretExpiresAt ?? "") - Date.now()) / 3_600_000;
    expect(hoursOfGrace).toBeGreaterThan(1.9);
    expect(hoursOfGrace).toBeLessThanOrEqual(2);
    // Within the grace period both secrets work.
    await expect(dashboards.usage.get({ from: "2025-01-01", to: "2025-01-31" })).resolves.toHaveProperty("totals");

    await stack.destroy();
    expectNothingLeft(fixture);
    await expect(dashboards.usage.get({ from: "2025-01-01", to: "2025-01-31" })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
  });

  it("ip-hygiene: a blacklisted address shows up after a refresh, is retired for free, and the ceiling blocks a charged swap", async () => {
    fixture = await exampleFixture("ip-hygiene", {}, TRANSPILE_ONLY);
    const { stack, server } = fixture;
    await stack.up();
    const usIp = value<Record<string, { ip: string }>>((await stack.outputs()) as Record<string, Output>, "addresses")[
      "us-new-york"
    ]?.ip as string;
    server.control.setIpHealth(usIp, { health: "bad", blacklists: 2 });

    const refreshed = await stack.up({ refresh: true });
    expect(value(refreshed.outputs, "needsReplacement")).toEqual([
      { name: "us-new-york", ip: usIp, health: "bad", blacklists: 2 },
    ]);

    const retire = async (ip: string) => {
      const allocations = [
        { name: "us-new-york", country: "us", city: "new york", retire: ip },
        { name: "de-frankfurt", country: "de", city: "frankfurt" },
      ];
      await stack.setConfig("ip-hygiene:allocations", { value: JSON.stringify(allocations) });
      return stack.up();
    };
    const swapped = await retire(usIp);
    const us = value<Record<string, { ip: string; lastReplacedIp: string; health: string }>>(
      swapped.outputs,
      "addresses",
    )["us-new-york"];
    expect(us).toMatchObject({ lastReplacedIp: usIp, health: "good" });
    expect(us?.ip).not.toBe(usIp);
    expect(value(swapped.outputs, "needsReplacement")).toEqual([]);
    expect((await stack.preview()).changeSummary).toEqual({ same: 3 });

    // The second replacement this month is still free; the third would be charged, and the ceiling is 0.
    const second = await retire(us?.ip as string);
    const secondIp = value<Record<string, { ip: string }>>(second.outputs, "addresses")["us-new-york"]?.ip as string;
    await expect(retire(secondIp)).rejects.toThrow(/would cost \d+ cents, above maxReplacementChargeCents/);
    expect(
      server.control.snapshot().charges.filter((charge) => (charge as { kind: string }).kind !== "ip_allocation"),
    ).toEqual([]);

    await stack.destroy();
    expectNothingLeft(fixture);
  });
});
