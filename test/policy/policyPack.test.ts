import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { runCli } from "../support/cli";
import { type CliRun, type CliWorkspace, cliWorkspace, pulumi } from "../support/pulumiCli";

/**
 * The shipped pack, set up as the README says (`pulumi-proxy policy init` inside the project), run by
 * the real CLI's `pulumi preview --policy-pack`. One stack holds a resource breaking each rule and one
 * keeping it, dynamic and native alike; each preview reads a different policy config file.
 */
const PROGRAM = {
  "Pulumi.yaml": "name: policed-proxy\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
  "package.json": JSON.stringify({ name: "policed-proxy", main: "index.js" }),
  "index.js": `
const pulumi = require("@pulumi/pulumi");
const { ApiKey, IpAllocation, ProxyUser } = require("pulumi-proxy");
new ProxyUser("capped", { name: "capped", limits: { monthlyGb: 100 } });
new ProxyUser("uncapped", { name: "uncapped" });
new ApiKey("reports", { name: "reports", scopes: ["usage:read"], rotateAfterDays: 30, graceHours: 24 });
new ApiKey("billing", { name: "billing-bot", scopes: ["usage:read", "billing:write"], rotateAfterDays: 30 });
new ApiKey("forever", { name: "forever", scopes: ["usage:read"] });
new ApiKey("expiring", { name: "expiring", scopes: ["usage:read"], expiresAt: new Date(Date.now() + 30 * 86400000).toISOString() });
new ApiKey("abrupt", { name: "abrupt", scopes: ["usage:read"], rotateAfterDays: 30, graceHours: 0 });
new IpAllocation("home", { product: "isp", country: "us" });
new IpAllocation("pricey", { product: "isp", country: "us", maxReplacementChargeCents: 900 });
new IpAllocation("edge", { product: "dedicated", country: "fr", maxReplacementChargeCents: 100 });
new pulumi.CustomResource("proxy:index:ApiKey", "native-admin", {
  name: "native-admin", scopes: ["keys:write"], rotateAfterDays: 30, secret: undefined,
});
`,
};

const DYNAMIC = "pulumi-nodejs:dynamic/proxy";
/** The engine's line for a violation: level, rule, then the resource's type and name. */
const violation = (level: string, rule: string, type: string, name: string) =>
  new RegExp(`\\[${level}\\]\\s+${rule}\\s+\\(${type.replace("/", "\\/")}: ${name}\\)`);

describe("the pulumi-proxy policy pack in `pulumi preview --policy-pack`", () => {
  let cli: CliWorkspace;
  let server: ReferenceServer;
  let program: string;
  let pack: string;
  const preview = async (config?: Record<string, unknown>): Promise<CliRun> => {
    const args = ["preview", "--policy-pack", pack];
    if (config) {
      const file = path.join(cli.dir, `config-${Date.now()}.json`);
      fs.writeFileSync(file, JSON.stringify(config));
      args.push("--policy-pack-config", file);
    }
    const run = await pulumi(args, program, cli.env);
    expect(run.output).not.toContain(server.rootKey);
    return run;
  };

  beforeAll(async () => {
    cli = cliWorkspace();
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    program = cli.project("program", PROGRAM);
    const env = cli.env as Record<string, string>;
    const init = await runCli(["policy", "init", path.join(program, "proxy-policy")], env);
    expect(init.code, init.stderr).toBe(0);
    pack = path.join(program, "proxy-policy");
    const install = await runCli(["provider", "install"], env);
    expect(install.code, install.stderr).toBe(0);
    for (const args of [
      ["stack", "init", "dev"],
      ["config", "set", "proxy:apiUrl", server.url],
      ["config", "set", "--secret", "proxy:apiKey", server.rootKey],
    ]) {
      expect((await pulumi(args, program, cli.env)).code).toBe(0);
    }
  });
  afterAll(async () => {
    await server?.close();
    cli?.cleanup();
  });

  it("with the defaults, fails on the mandatory rules, naming the resource, the rule and the fix", async () => {
    const run = await preview();
    expect(run.code, run.output).not.toBe(0);
    const { output } = run;
    expect(output).toMatch(violation("mandatory", "proxy-user-monthly-ceiling", `${DYNAMIC}:ProxyUser`, "uncapped"));
    expect(output).toContain('ProxyUser "uncapped": limits.monthlyGb is not set (no ceiling); set it to at most 1000.');
    expect(output).not.toMatch(violation("mandatory", "proxy-user-monthly-ceiling", `${DYNAMIC}:ProxyUser`, "capped"));

    const allowList = "key-sensitive-scopes-allow-list";
    expect(output).toMatch(violation("mandatory", allowList, `${DYNAMIC}:ApiKey`, "billing"));
    expect(output).toContain(
      'ApiKey "billing": the key "billing-bot" holds "billing:write" but is not on the allow-list (empty); remove those scopes, or add "billing-bot" to allowedNames.',
    );
    expect(output).toMatch(violation("mandatory", allowList, "proxy:index:ApiKey", "native-admin"));
    expect(output).not.toMatch(violation("mandatory", allowList, `${DYNAMIC}:ApiKey`, "reports"));

    // The advisory rules report, and do not fail the preview on their own (the next case shows that).
    expect(output).toMatch(violation("advisory", "key-rotation-or-expiry", `${DYNAMIC}:ApiKey`, "forever"));
    expect(output).toContain(
      'ApiKey "forever": rotateAfterDays is not set and expiresAt is not set; set rotateAfterDays to at most 90.',
    );
    expect(output).not.toMatch(violation("advisory", "key-rotation-or-expiry", `${DYNAMIC}:ApiKey`, "reports"));
    expect(output).not.toMatch(violation("advisory", "key-rotation-or-expiry", `${DYNAMIC}:ApiKey`, "expiring"));
    expect(output).toMatch(violation("advisory", "key-rotation-grace", `${DYNAMIC}:ApiKey`, "abrupt"));
    expect(output).toContain('ApiKey "abrupt": graceHours is 0; set it to at least 1.');
    expect(output).not.toMatch(violation("advisory", "key-rotation-grace", `${DYNAMIC}:ApiKey`, "reports"));
    expect(output).toMatch(violation("advisory", "ip-max-replacement-charge", `${DYNAMIC}:IpAllocation`, "pricey"));
    expect(output).toContain('IpAllocation "pricey": maxReplacementChargeCents is 900; set it to at most 500.');
    expect(output).not.toMatch(violation("advisory", "ip-max-replacement-charge", `${DYNAMIC}:IpAllocation`, "edge"));
    // Every product and country is allowed until the config file lists some.
    expect(output).not.toContain("ip-allowed-products-countries");
  });

  it("the config file sets the levels and numbers: all advisory, so the preview passes with warnings", async () => {
    const run = await preview({
      all: "advisory",
      "proxy-user-monthly-ceiling": { maxMonthlyGb: 50 },
      "key-sensitive-scopes-allow-list": { allowedNames: ["billing-bot"] },
      "key-rotation-or-expiry": { maxDays: 20 },
      "ip-max-replacement-charge": "disabled",
      "ip-allowed-products-countries": { products: ["isp"], countries: ["us"] },
    });
    expect(run.code, run.output).toBe(0);
    const { output } = run;
    expect(output).not.toContain("[mandatory]");
    expect(output).toMatch(violation("advisory", "proxy-user-monthly-ceiling", `${DYNAMIC}:ProxyUser`, "capped"));
    expect(output).toContain('ProxyUser "capped": limits.monthlyGb is 100 GB; set it to at most 50.');
    expect(output).not.toMatch(/key-sensitive-scopes-allow-list\s+\([^)]*: billing\)/);
    expect(output).toMatch(
      violation("advisory", "key-sensitive-scopes-allow-list", "proxy:index:ApiKey", "native-admin"),
    );
    expect(output).toContain(
      'ApiKey "reports": rotateAfterDays is 30 and expiresAt is not set; set rotateAfterDays to at most 20.',
    );
    expect(output).not.toContain("ip-max-replacement-charge");
    expect(output).toMatch(violation("advisory", "ip-allowed-products-countries", `${DYNAMIC}:IpAllocation`, "edge"));
    expect(output).toContain('IpAllocation "edge": product "dedicated" is not allowed; use one of "isp".');
    expect(output).toContain('IpAllocation "edge": country "fr" is not allowed; use one of "us".');
    expect(output).not.toMatch(/ip-allowed-products-countries\s+\([^)]*: home\)/);
  });
});
