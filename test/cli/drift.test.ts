import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { DriftJson } from "../../cli/drift/command";
import { type ExampleFixture, exampleFixture, expectNothingLeft } from "../examples/harness";
import { runCli } from "../support/cli";

const DAY_MS = 24 * 60 * 60 * 1000;

/** The gitops example's `team` output: its proxy users by name. */
type Team = Record<string, { id: string; username: string; enabled: boolean }>;

const json = (value: unknown) => ({ value: JSON.stringify(value) });
/** The server's clock: real time, moved forward by the test to let the service's own status change. */
let offsetMs = 0;
const clock = { now: () => Date.now() + offsetMs };

describe("pulumi-proxy drift, end to end on the gitops example", () => {
  let fixture: ExampleFixture;
  let env: Record<string, string>;
  let crawlerId: string;
  let created: Record<string, number>;
  let team: Team;
  const driftArgs = () => ["drift", "--stack", fixture.stackName, "--cwd", fixture.dir];

  beforeAll(async () => {
    // The examples suite runs the program with type checking, as users do; here only the command is
    // under test, so the program is transpiled only, which saves seconds on every preview.
    fixture = await exampleFixture("gitops", {}, { PULUMI_NODEJS_TRANSPILE_ONLY: "true" }, { clock });
    env = { ...(process.env as Record<string, string>), ...fixture.envVars };
    const up = await fixture.stack.up();
    created = up.summary.resourceChanges ?? {};
    team = up.outputs.team?.value as Team;
    crawlerId = team.crawler?.id as string;
  });
  afterAll(async () => {
    // No destroy: the objects live only in this test's server, which closing discards (a destroy is an engine run).
    await fixture?.cleanup();
  });

  it("the example's default team and report key come up as declared", async () => {
    expect(created).toEqual({ create: 4 });
    expect(Object.keys(team).sort()).toEqual(["crawler", "monitor"]);
    expect(await fixture.api.proxyUsers.get(crawlerId)).toMatchObject({
      name: "team-crawler",
      limits: { daily_gb: 20, monthly_gb: 400 },
    });
  });

  it("exits 0 when the API matches the state, with the CLI given by --pulumi-root instead of PATH", async () => {
    const pathWithoutPulumi = [path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter);
    const result = await runCli([...driftArgs(), "--pulumi-root", path.dirname(inject("pulumiBinDir"))], {
      ...env,
      PATH: pathWithoutPulumi,
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain(`No drift in stack ${fixture.stackName}`);
    expect(result.code).toBe(0);
  });

  it("leaves the folder's current stack as the user chose it", async () => {
    // `pulumi stack init` makes the new stack the folder's current one, as `pulumi stack select` does.
    const pulumi = (...args: string[]) =>
      execFileSync(path.join(inject("pulumiBinDir"), "pulumi"), [...args, "--non-interactive"], {
        cwd: fixture.dir,
        env,
        encoding: "utf8",
      }).trim();
    const chosen = `${fixture.stackName}-chosen`;
    pulumi("stack", "init", chosen);
    try {
      expect(pulumi("stack", "--show-name")).toBe(chosen);
      const result = await runCli(driftArgs(), env);
      expect(result.code, result.stderr).toBe(0);
      // Before: the command ran `pulumi stack select`, and a bare `pulumi up` here then went to its stack.
      expect(pulumi("stack", "--show-name")).toBe(chosen);
    } finally {
      pulumi("stack", "rm", "--yes", "--stack", chosen);
    }
  });

  it("exits 2 after an out-of-band change, with a table and a JSON report naming the property", async () => {
    await fixture.api.proxyUsers.update(crawlerId, { limits: { monthly_gb: 250 } });

    const jsonFile = path.join(fixture.tempDir, "drift.json");
    const table = await runCli([...driftArgs(), `--json=${jsonFile}`], env);
    expect(table.code).toBe(2);
    expect(table.stdout).toMatch(/^Drift in stack \S+: 1 resource changed outside Pulumi\./);
    expect(table.stdout).toMatch(/crawler \(proxy:ProxyUser\)\s+limits\.monthlyGb\s+400 → 250\s+update/);
    expect(table.stdout).toContain("PLANNED is what `pulumi up --refresh` does");
    const fromFile = JSON.parse(fs.readFileSync(jsonFile, "utf8")) as DriftJson;
    expect(fromFile).toMatchObject({ version: 1, stack: fixture.stackName, drift: true });

    const json = await runCli([...driftArgs(), "--json"], env);
    expect(json.code).toBe(2);
    const report = JSON.parse(json.stdout) as DriftJson;
    expect(report.drifted).toHaveLength(1);
    expect(report.drifted[0]).toMatchObject({ name: "crawler", kind: "changed", plannedOp: "update" });
    expect(report.drifted[0]?.properties).toContainEqual({ path: "limits.monthlyGb", recorded: 400, actual: 250 });
    expect(json.stderr).toContain("limits.monthlyGb");
    expect(json.stdout + json.stderr).not.toContain(fixture.server.rootKey);

    // As the table says: a plain up acts on the recorded 400 and leaves the change; up --refresh undoes it.
    await fixture.stack.up();
    expect((await fixture.api.proxyUsers.get(crawlerId)).limits.monthly_gb).toBe(250);
    await fixture.stack.up({ refresh: true });
    expect((await fixture.api.proxyUsers.get(crawlerId)).limits.monthly_gb).toBe(400);
    const converged = await runCli(driftArgs(), env);
    expect(converged.code).toBe(0);
  });

  it("exits 0 while only the service's own status moves: a reverted change, a grace period ending, a renewal", async () => {
    const keys = { "usage-reports": { scopes: ["usage:read"], rotation: "r1", graceHours: 1 } };
    await fixture.stack.setConfig("gitops:keys", json(keys));
    await fixture.stack.setConfig("gitops:addresses", json({ edge: { product: "isp", country: "de" } }));
    await fixture.stack.up();
    const [key] = await fixture.api.keys
      .list()
      .all()
      .then((all) => all.filter((k) => k.name.endsWith("usage-reports")));
    const [allocation] = await fixture.api.ips.list().all();
    expect(key?.previous_secret_expires_at).not.toBeNull();

    // Raised and put back outside Pulumi: the limits match the state, the timestamp does not.
    const before = await fixture.api.proxyUsers.get(crawlerId);
    await fixture.api.proxyUsers.update(crawlerId, { limits: { monthly_gb: 500 } });
    await fixture.api.proxyUsers.update(crawlerId, { limits: { monthly_gb: 400 } });
    // A month on: the rotated-out secret's grace hour is over and the address has renewed.
    offsetMs += 31 * DAY_MS;
    expect((await fixture.api.proxyUsers.get(crawlerId)).updated_at).not.toBe(before.updated_at);
    expect((await fixture.api.keys.get(key?.id as string)).previous_secret_expires_at).toBeNull();
    expect((await fixture.api.ips.get(allocation?.id as string)).renews_at).not.toBe(allocation?.renews_at);

    const result = await runCli(driftArgs(), env);
    expect(result.stdout).toContain(`No drift in stack ${fixture.stackName}`);
    expect(result.code).toBe(0);
  });

  it("exits 1 with a clear message for an unknown stack, a bad flag, or no Pulumi CLI", async () => {
    const unknown = await runCli(["drift", "--stack", "no-such-stack", "--cwd", fixture.dir], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('stack "no-such-stack" does not exist');

    const badFlag = await runCli([...driftArgs(), "--colour"], env);
    expect(badFlag.code).toBe(1);
    expect(badFlag.stderr).toMatch(/Unknown option '--colour'[\s\S]*usage: pulumi-proxy drift/);

    const noStack = await runCli(["drift", "--cwd", fixture.dir], env);
    expect(noStack.code).toBe(1);
    expect(noStack.stderr).toContain("--stack is required");

    const noCli = await runCli(driftArgs(), {
      ...env,
      PATH: [path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter),
    });
    expect(noCli.code).toBe(1);
    expect(noCli.stderr).toContain("no Pulumi CLI found");
    expect(noCli.stderr).toContain("--pulumi-root");
  });

  it("destroy leaves the account as it was", async () => {
    await fixture.stack.destroy();
    expectNothingLeft(fixture);
  });
});
