import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlanJson } from "../../cli/plan/model";
import { formatPlanMarkdown, formatPlanText } from "../../cli/plan/render";
import { type ExampleFixture, exampleFixture } from "../examples/harness";
import { runCli } from "../support/cli";

const json = (value: unknown) => ({ value: JSON.stringify(value) });
/** Two plans (each a preview with refresh) and an up: more than the suite's 300 s on a loaded 2-core machine. */
const MANY_ENGINE_RUNS = { timeout: 600_000 };

const BEFORE = {
  users: {
    crawler: { dailyGb: 5, monthlyGb: 100 },
    monitor: { dailyGb: 1, monthlyGb: 20 },
    batch: { monthlyGb: 50 },
  },
  keys: {
    "usage-reports": { scopes: ["usage:read"] },
    deployer: { scopes: ["proxy-users:read"], rotation: "2025-06" },
    "old-ci": { scopes: ["usage:read", "proxy-users:read"] },
  },
};

const AFTER = {
  users: {
    crawler: { dailyGb: 10, monthlyGb: null },
    monitor: { dailyGb: 1, monthlyGb: 20, reenable: "INC-42" },
    batch: { dailyGb: 2, monthlyGb: 40, enabled: false },
  },
  keys: {
    "usage-reports": { scopes: ["usage:read", "billing:write"] },
    deployer: { scopes: ["proxy-users:read"], rotation: "2025-07", graceHours: 48 },
    metrics: { scopes: ["usage:read", "keys:write"] },
  },
};

describe("pulumi-proxy plan: changes and access, end to end on the gitops example", () => {
  let fixture: ExampleFixture;
  let env: Record<string, string>;
  const planArgs = (...extra: string[]) => ["plan", "--stack", fixture.stackName, "--cwd", fixture.dir, ...extra];

  beforeAll(async () => {
    fixture = await exampleFixture("gitops", { "gitops:prefix": "acme" }, { PULUMI_NODEJS_TRANSPILE_ONLY: "true" });
    env = { ...(process.env as Record<string, string>), ...fixture.envVars };
    await fixture.stack.setConfig("gitops:users", json(BEFORE.users));
    await fixture.stack.setConfig("gitops:keys", json(BEFORE.keys));
    await fixture.stack.up();
  });
  afterAll(async () => {
    // No destroy: the objects live only in this test's server, which closing discards (a destroy is an engine run).
    await fixture?.cleanup();
  });

  it(
    "lists every change, its access impact, and what up then does; no secret is ever printed",
    MANY_ENGINE_RUNS,
    async () => {
      const monitorId = (await fixture.stack.outputs()).team?.value.monitor.id as string;
      await fixture.api.proxyUsers.disable(monitorId); // an emergency disable, outside Pulumi
      await fixture.stack.setConfig("gitops:users", json(AFTER.users));
      await fixture.stack.setConfig("gitops:keys", json(AFTER.keys));

      const asJson = await runCli(planArgs("--refresh", "--json"), env);
      expect(asJson.stderr).toBe("");
      expect(asJson.code).toBe(2);
      const plan = JSON.parse(asJson.stdout) as PlanJson;
      expect(plan).toMatchObject({ version: 1, stack: fixture.stackName, refresh: true, hasChanges: true });
      expect(plan.summary).toEqual({ create: 1, update: 4, replace: 1, delete: 1 });
      expect(plan.cost).toEqual({ currency: "usd", totalCents: 0, total: "$0.00", items: [] });

      const keys = Object.fromEntries(plan.access.keys.map((key) => [key.name, key]));
      expect(keys["usage-reports"]).toMatchObject({
        change: "replaced",
        previousScopes: ["usage:read"],
        scopes: ["usage:read", "billing:write"],
        addedScopes: ["billing:write"],
        sensitiveScopes: ["billing:write"],
      });
      expect(keys.deployer).toMatchObject({
        change: "rotated",
        graceHours: 48,
        impact: "secret rotated, old one valid for 48 h",
      });
      expect(keys["old-ci"]).toMatchObject({ change: "revoked", scopes: ["usage:read", "proxy-users:read"] });
      expect(keys.metrics).toMatchObject({
        change: "created",
        keyName: "acme-metrics",
        sensitiveScopes: ["keys:write"],
      });

      const users = Object.fromEntries(plan.access.users.map((user) => [user.username, user.change]));
      expect(users).toEqual({ "acme-monitor": "released", "acme-batch": "disabled" });
      const ceilings = plan.access.ceilings.map(({ username, limit, change, before, after }) => ({
        username,
        limit,
        change,
        before,
        after,
      }));
      expect(ceilings).toEqual([
        { username: "acme-batch", limit: "dailyGb", change: "added", before: null, after: 2 },
        { username: "acme-batch", limit: "monthlyGb", change: "lowered", before: 50, after: 40 },
        { username: "acme-crawler", limit: "dailyGb", change: "raised", before: 5, after: 10 },
        { username: "acme-crawler", limit: "monthlyGb", change: "removed", before: 100, after: null },
      ]);

      const changes = Object.fromEntries(plan.changes.map((change) => [change.name, change]));
      expect(changes["usage-reports"]?.properties).toEqual([
        { path: "scopes", before: ["usage:read"], after: ["usage:read", "billing:write"], forcesReplacement: true },
      ]);
      expect(changes.deployer?.notes).toContain("secret rotated, old one valid for 48 h (rotationTrigger changed)");
      expect(changes.crawler?.properties).toContainEqual({
        path: "limits.monthlyGb",
        before: 100,
        forcesReplacement: false,
      });

      // The same plan as a PR comment and as text: `--markdown` and the default pick these renderers
      // (the policy test below and the settled plan run them through the command); another preview
      // with refresh each would show nothing more.
      const markdown = formatPlanMarkdown(plan);
      expect(markdown).toContain(`<!-- pulumi-proxy-plan stack=${fixture.stackName} -->`);
      expect(markdown).toContain("⚠️ 2 keys gain billing:write or keys:write");
      expect(markdown).toMatch(/key `acme-usage-reports` \*\*replaced\*\*: .*gains \*\*`billing:write`\*\*/);
      expect(markdown).toContain("`acme-monitor` **released**: Released from an emergency disable");
      expect(markdown).toContain("`acme-crawler` monthly ceiling **removed**: 100 GB → no ceiling");

      const text = formatPlanText(plan);
      expect(text).toMatch(/^Plan for stack \S+: 1 to create, 4 to update, 1 to replace, 1 to delete\. Cost \$0\.00\./);
      expect(text).toContain("key acme-old-ci REVOKED");

      for (const output of [asJson.stdout + asJson.stderr, markdown, text]) {
        expect(output).not.toContain(fixture.server.rootKey);
        expect(output).not.toMatch(/live_[A-Za-z0-9]{8}/);
      }

      // What the plan announced is what `up` does.
      await fixture.stack.up({ refresh: true });
      const held = fixture.server.control.snapshot();
      const user = (name: string) => held.proxyUsers.find((u) => (u as { name: string }).name === name) as never;
      expect(user("acme-monitor")).toMatchObject({ enabled: true });
      expect(user("acme-batch")).toMatchObject({ enabled: false, limits: { daily_gb: 2, monthly_gb: 40 } });
      expect(user("acme-crawler")).toMatchObject({ limits: { daily_gb: 10, monthly_gb: null } });
      const keyScopes = Object.fromEntries(
        held.keys.map((key) => [(key as { name: string }).name, (key as { scopes: string[] }).scopes]),
      );
      expect(keyScopes["acme-usage-reports"]).toEqual(["usage:read", "billing:write"]);
      expect(keyScopes["acme-old-ci"]).toBeUndefined();

      const settled = await runCli(planArgs(), env);
      expect(settled.code).toBe(0);
      expect(settled.stdout.trim()).toBe(`Plan for stack ${fixture.stackName}: no changes.`);
    },
  );

  it("runs the example's policy pack: violations first, the rule and the fix named, exit 3; none once fixed", async () => {
    // A pull request that raises a ceiling past the pack's 1000 GB and keeps two keys with
    // billing:write and keys:write that the allow-list does not name: two mandatory rules broken.
    await fixture.stack.setConfig("gitops:users", json({ ...AFTER.users, crawler: { dailyGb: 10, monthlyGb: 2000 } }));
    await fixture.stack.setConfig("gitops:keys", json(AFTER.keys));
    const pack = ["--policy-pack", "proxy-policy", "--policy-pack-config", "proxy-policy/policy-config.json"];
    const broken = await runCli(planArgs(...pack, "--markdown"), env, fixture.dir);
    expect(broken.code, broken.stderr).toBe(3);
    const markdown = broken.stdout;
    const policy = markdown.indexOf("### Policy");
    expect(policy).toBeGreaterThan(0);
    expect(policy).toBeLessThan(markdown.indexOf("### Cost"));
    expect(markdown).toMatch(
      /⛔ 3 mandatory violations, \d+ advisory \(`proxy-policy`\): this change cannot be applied/,
    );
    const lines = markdown.split("\n").filter((line) => /^- \*\*(mandatory|advisory)\*\*/.test(line));
    expect(lines.slice(0, 3)).toEqual([
      expect.stringMatching(
        /^- \*\*mandatory\*\* `proxy-user-monthly-ceiling` on `crawler`: .*limits\.monthlyGb is 2000 GB; set it to at most 1000\./,
      ),
      expect.stringMatching(/^- \*\*mandatory\*\* `key-sensitive-scopes-allow-list` on `metrics`: .*keys:write/),
      expect.stringMatching(
        /^- \*\*mandatory\*\* `key-sensitive-scopes-allow-list` on `usage-reports`: .*billing:write/,
      ),
    ]);
    expect(lines.slice(3).every((line) => line.startsWith("- **advisory**"))).toBe(true);
    // The plan is whole all the same: the reviewer sees what the change would do.
    expect(markdown).toMatch(/`acme-crawler` monthly ceiling \*\*\w+\*\*: .* → 2000 GB/);
    expect(markdown).not.toContain(fixture.server.rootKey);

    // A resource's own error beside the violations is not a verdict: the plan fails with that error.
    await fixture.stack.setConfig(
      "gitops:users",
      json({ ...AFTER.users, crawler: { dailyGb: 3000, monthlyGb: 2000 } }),
    );
    const invalid = await runCli(planArgs(...pack), env, fixture.dir);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/crawler[\s\S]*dailyGb/);

    // Fixed: the ceiling within bounds, the keys back to reading; advisory rules off in this team's config.
    await fixture.stack.setConfig("gitops:users", json({ ...AFTER.users, crawler: { dailyGb: 10, monthlyGb: 800 } }));
    await fixture.stack.setConfig(
      "gitops:keys",
      json({ ...AFTER.keys, "usage-reports": { scopes: ["usage:read"] }, metrics: { remove: true } }),
    );
    const config = JSON.parse(fs.readFileSync(path.join(fixture.dir, "proxy-policy", "policy-config.json"), "utf8"));
    for (const rule of Object.values(config) as { enforcementLevel: string }[]) {
      if (rule.enforcementLevel === "advisory") rule.enforcementLevel = "disabled";
    }
    const strict = path.join(fixture.tempDir, "mandatory-only.json");
    fs.writeFileSync(strict, JSON.stringify(config));
    const clean = await runCli(
      planArgs("--policy-pack", "proxy-policy", "--policy-pack-config", strict, "--json"),
      env,
      fixture.dir,
    );
    expect(clean.code, clean.stderr).toBe(2);
    const plan = JSON.parse(clean.stdout) as PlanJson;
    expect(plan.policy).toEqual({ packs: [path.join(fixture.dir, "proxy-policy")], violations: [], failed: false });
    expect(formatPlanText(plan)).toContain("No policy violations (proxy-policy).");
  });

  // Issue #32, item 2: with a key the API refuses, plan printed a normal plan ("Cost $0.00") and exited 2.
  it("prints no plan and exits 1, naming the key and the command that sets another, when the API refuses the key", async () => {
    const refusedKey = `live_${"P".repeat(40)}`;
    await fixture.stack.setConfig("proxy:apiKey", { value: refusedKey, secret: true });
    try {
      const run = await runCli(planArgs(), env);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain("401 invalid_api_key");
      expect(run.stderr).toContain("The key is the stack's proxy:apiKey");
      expect(run.stderr).toContain("pulumi config set --secret proxy:apiKey <key>");
      expect(run.stderr).not.toContain(refusedKey.slice(5, 15));
    } finally {
      await fixture.stack.setConfig("proxy:apiKey", { value: fixture.server.rootKey, secret: true });
    }
  });

  it("exits 1 with a clear message for conflicting formats, a missing stack name or an unknown stack", async () => {
    const both = await runCli(planArgs("--json", "--markdown"), env);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/--json and --markdown exclude each other[\s\S]*usage: pulumi-proxy plan/);

    const noStack = await runCli(["plan", "--cwd", fixture.dir], env);
    expect(noStack.code).toBe(1);
    expect(noStack.stderr).toContain("--stack is required");

    const unknown = await runCli(["plan", "--stack", "no-such-stack", "--cwd", fixture.dir], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('stack "no-such-stack" does not exist');
  });
});
