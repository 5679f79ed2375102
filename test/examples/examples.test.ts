import { afterEach, describe, expect, it } from "vitest";
import { AuthenticationError, PermissionDeniedError, ProxyClient } from "../../sdk";
import { expectNothingLeft } from "./harness";
import { printedJson, type ReadmeExample, readmeExample } from "./readmeExample";

type Output = { value: unknown; secret: boolean };
const value = <T>(outputs: Record<string, Output>, key: string) => outputs[key]?.value as T;

type Addresses = Record<string, { ip: string; lastReplacedIp?: string; health?: string }>;

/**
 * Each example's stack is built by its README's own blocks, run word for word in a copy of the
 * example (the README marks them `readme:skip` for that reason); the test's steps and assertions go
 * on from there on the same stack. These runs skip ts-node's type check to save seconds per engine run
 * (`npm test` type-checks every example with tsc); the quickstart runs with it, from the packed
 * tarball, in packInstall.test.ts. The gitops example's lifecycle is checked by test/cli/drift.test.ts.
 */
let readme: ReadmeExample | undefined;
afterEach(async () => {
  await readme?.cleanup();
  readme = undefined;
});

describe("examples, each built by its README's commands against the reference server", () => {
  it("scoped-keys: each key works only within its scopes, and one config change rotates every secret", async () => {
    readme = await readmeExample("scoped-keys");
    const { server } = readme;
    await readme.runBlock("pulumi stack init dev");
    const stack = await readme.stack();
    const first = (await stack.outputs()) as Record<string, Output>;
    const secrets = value<Record<string, string>>(first, "secrets");
    expect(first.secrets?.secret).toBe(true);
    expect(Object.keys(secrets).sort()).toEqual(["dashboards", "finance", "onboarding", "oncall"]);
    expect(printedJson(await readme.runBlock("pulumi stack output secrets")), "what the README hands out").toEqual(
      secrets,
    );
    const held = server.control.snapshot().keys as { name: string; scopes: string[] }[];
    expect(held.find((key) => key.name === "scoped-oncall")?.scopes.sort()).toEqual([
      "proxy-users:read",
      "proxy-users:write",
    ]);

    const dashboards = new ProxyClient({ baseUrl: server.url, apiKey: secrets.dashboards as string, maxRetries: 0 });
    await expect(dashboards.usage.get({ from: "2025-01-01", to: "2025-01-31" })).resolves.toHaveProperty("totals");
    await expect(dashboards.proxyUsers.list().all()).rejects.toBeInstanceOf(PermissionDeniedError);

    // A grace period other than the default shows that graceHours reaches the keys.
    await stack.setConfig("scoped-keys:graceHours", { value: "2" });
    await readme.runBlock("pulumi config set rotation");
    expect((await stack.history(1))[0]?.resourceChanges).toMatchObject({ update: 4 });
    const rotated = (await stack.outputs()) as Record<string, Output>;
    const newSecrets = value<Record<string, string>>(rotated, "secrets");
    const info = value<Record<string, { lastRotatedAt: string | null; previousSecretExpiresAt: string }>>(
      rotated,
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
    expectNothingLeft(readme);
    await expect(dashboards.usage.get({ from: "2025-01-01", to: "2025-01-31" })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
  });

  it("ip-hygiene: a blacklisted address shows up after a refresh and is retired for free; --path edits of one allocation keep the others", async () => {
    readme = await readmeExample("ip-hygiene");
    const { server } = readme;
    await readme.runBlock("pulumi stack init dev");
    const stack = await readme.stack();
    const addresses = value<Addresses>((await stack.outputs()) as Record<string, Output>, "addresses");
    const usIp = addresses["us-new-york"]?.ip as string;
    const deIp = addresses["de-frankfurt"]?.ip as string;
    // The README retires 192.0.2.10 by name: the first address of the reference server's New York pool.
    expect(usIp).toBe("192.0.2.10");

    // Names an address allocation [1] never held: nothing happens, and the preview says why.
    await stack.setConfig("ip-hygiene:allocations[1].retire", { value: usIp }, true);
    const wrong = await stack.preview();
    expect(wrong.changeSummary).toEqual({ same: 3 });
    expect(wrong.stdout).toContain(
      `replaceTrigger names ${usIp}, which this allocation does not hold (it holds ${deIp})`,
    );
    await stack.removeConfig("ip-hygiene:allocations", true);

    // The README's retirement, on a stack without the list: the refresh reports the bad address, then
    // allocation [0] is swapped for free and [1] stays.
    server.control.setIpHealth(usIp, { health: "bad", blacklists: 2 });
    const printed = await readme.runBlock("pulumi up --refresh");
    expect(printedJson(printed), "what `pulumi stack output needsReplacement` printed").toEqual([
      { name: "us-new-york", ip: usIp, health: "bad", blacklists: 2 },
    ]);
    expect((await stack.history(1))[0]?.resourceChanges).toEqual({ same: 2, update: 1 });
    const swapped = (await stack.outputs()) as Record<string, Output>;
    const after = value<Addresses>(swapped, "addresses");
    expect(after["us-new-york"]).toMatchObject({ lastReplacedIp: usIp, health: "good" });
    expect(after["us-new-york"]?.ip).not.toBe(usIp);
    expect(after["de-frankfurt"]?.ip).toBe(deIp);
    expect(value(swapped, "needsReplacement")).toEqual([]);
    const charges = server.control.snapshot().charges as { kind: string }[];
    expect(
      charges.filter((charge) => charge.kind !== "ip_allocation"),
      "the first swap is free",
    ).toEqual([]);

    // The trigger is inert once swapped; removing it afterwards asks for nothing either: no second
    // swap spends a free replacement. (Two free swaps, then a refusal at the default ceiling of 0:
    // test/provider/ipAllocation.test.ts and test/cli/planCost.test.ts.)
    expect((await stack.preview()).changeSummary).toEqual({ same: 3 });
    await stack.removeConfig("ip-hygiene:allocations[0].retire", true);
    expect((await stack.preview()).changeSummary).toEqual({ same: 3 });

    // An entry beyond the defaults without a name is refused at preview, naming what is missing.
    await stack.setConfig("ip-hygiene:allocations[1].city", { value: "frankfurt" }, true);
    await stack.setConfig("ip-hygiene:allocations[2].retire", { value: "192.0.2.1" }, true);
    await expect(stack.preview()).rejects.toThrow(/ip-hygiene:allocations\[2\] has no name and no country/);

    await stack.destroy();
    expectNothingLeft(readme);
  });
});
