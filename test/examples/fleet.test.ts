import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { FleetDriftJson } from "../../cli/fleet/drift";
import type { FleetPlanJson } from "../../cli/fleet/plan";
import type { FleetRecoverJson } from "../../cli/fleet/recover";
import type { ShardResult } from "../../cli/fleet/run";
import { SHARD_SCOPES } from "../../cli/fleet/spec";
import { PermissionDeniedError, ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { runCli } from "../support/cli";
import { REPO_ROOT } from "../support/pulumi";
import { blockWith, substitute } from "../support/readmeBlocks";
import { copyOfExample } from "../support/readmeRun";
import { runShell } from "../support/shell";
import { processesIn, tableRows } from "./fleetOutput";
import { EXAMPLES_DIR } from "./harness";

/**
 * The fleet example as its README runs it, K = 4 customers of one to three users each, on the real
 * engine against the reference server: one failing stack, convergence, drift and plan over the
 * fleet, rotation on schedule, a removed customer, a killed run recovered and the clean-up. One
 * set-up, run in order; the README's own blocks run here, word for word, where the fleet is as they expect.
 */
const DAY_MS = 24 * 60 * 60 * 1000;
type Key = { id: string; name: string; scopes: string[]; last_rotated_at: string | null };
type User = { name: string; limits: { daily_gb: number | null } };

/** The server's clock: two days behind at first, so the keys the fleet mints are two days old later. */
let offsetMs = -2 * DAY_MS;
let server: ReferenceServer;
let dir: string;
let tempDir: string;
let env: Record<string, string>;

const fleet = async (...args: string[]) => {
  const result = await runCli(["fleet", ...args, "--fleet", ".", "--json"], env, dir);
  const parsed = result.stdout.trim() ? (JSON.parse(result.stdout) as { stacks: ShardResult[] }) : undefined;
  return { ...result, byStack: Object.fromEntries((parsed?.stacks ?? []).map((stack) => [stack.stack, stack])) };
};
const keys = () => server.control.snapshot().keys as Key[];
const fleetKeys = () => keys().filter((key) => key.name.startsWith("fleet-"));
const users = () => server.control.snapshot().proxyUsers as User[];
const stackFile = (stack: string) => path.join(dir, `Pulumi.${stack}.yaml`);
const csv = () => path.join(dir, "users.csv");

/** The README's block whose first line starts with `command`, as a user types it, run in the fleet's folder. */
const readmeBlock = (command: string) => {
  const block = blockWith(path.join(EXAMPLES_DIR, "fleet", "README.md"), command, { firstLine: true });
  return runShell(["-euo", "pipefail"], substitute(block.script, { url: server.url, key: server.rootKey }), dir, env);
};
beforeAll(async () => {
  server = await startReferenceServer({ rateLimitPerMinute: 100_000, clock: { now: () => Date.now() + offsetMs } });
  tempDir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-fleet-"));
  dir = copyOfExample("fleet", tempDir, true);
  for (const sub of ["home", "backend"]) fs.mkdirSync(path.join(tempDir, sub));
  env = {
    ...(process.env as Record<string, string>),
    PULUMI_HOME: path.join(tempDir, "home"),
    PULUMI_BACKEND_URL: `file://${path.join(tempDir, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "fleet-test",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    PROXY_API_URL: server.url,
    PROXY_API_KEY: server.rootKey,
    PATH: `${inject("pulumiBinDir")}${path.delimiter}${process.env.PATH ?? ""}`,
  };
});
afterAll(async () => {
  // The README's `fleet destroy` ran last; whatever a failed test left lives in this server alone.
  await server?.close();
  fs.rmSync(tempDir, { recursive: true, force: true });
});

describe("examples/fleet: one stack per customer, each with its own narrow key", () => {
  it("one stack failing does not stop the others; each stack gets a key with only its scopes", async () => {
    // umbrella's daily ceiling above its monthly one: its stack fails in check, the rest go on.
    const good = fs.readFileSync(csv(), "utf8");
    fs.writeFileSync(csv(), good.replace("umbrella-ads,3,60", "umbrella-ads,300,60"));
    const run = await fleet("up");
    fs.writeFileSync(csv(), good);
    expect(run.code, run.stderr).toBe(1);
    expect(Object.keys(run.byStack)).toEqual(["acme", "globex", "initech", "umbrella"]);
    expect(run.byStack.umbrella).toMatchObject({ outcome: "failed" });
    expect(run.byStack.umbrella?.error).toMatch(/umbrella-ads.*dailyGb/s);
    for (const stack of ["acme", "globex", "initech"]) {
      expect(run.byStack[stack], stack).toMatchObject({ outcome: "ok", key: "minted" });
    }
    expect(run.byStack.acme?.changes).toEqual({ create: 4 });
    // The invalid user is never created. Its sibling may be: the engine checks each resource as it
    // registers it and runs the creates already planned, so whether umbrella-search lands before
    // umbrella-ads fails its check is a race (the next test's re-run converges either way).
    expect(users().map((user) => user.name)).not.toContain("umbrella-ads");

    expect(
      fleetKeys()
        .map((key) => key.name)
        .sort(),
    ).toEqual(["fleet-acme", "fleet-globex", "fleet-initech", "fleet-umbrella"]);
    for (const key of fleetKeys()) expect(key.scopes.sort(), key.name).toEqual([...SHARD_SCOPES].sort());
    // The key is the stack's secret config: encrypted in its settings file, never in plain text.
    const settings = fs.readFileSync(stackFile("acme"), "utf8");
    expect(settings).toMatch(/proxy:apiKey:\n\s+secure: v1:/);
    expect(settings).not.toMatch(/live_/);
  }, 900_000);

  it("re-running fixes the failed stack and changes nothing in the others", async () => {
    const files = ["acme", "globex", "initech"].map((stack) => fs.readFileSync(stackFile(stack), "utf8"));
    const keysBefore = JSON.stringify(fleetKeys());
    // The README's `fleet up`, its table read as a user reads it.
    const run = await readmeBlock("npx pulumi-proxy fleet up");
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain("4 stacks, 0 failed.");
    const byStack = tableRows(run.output);
    expect(Object.keys(byStack)).toEqual(["acme", "globex", "initech", "umbrella"]);
    // The failed run created what preceded the bad row; this one creates the rest.
    expect(byStack.umbrella).toMatchObject({ outcome: "ok", key: "kept" });
    expect(byStack.umbrella?.changes.create).toBeGreaterThan(0);
    const umbrella = users()
      .map((user) => user.name)
      .filter((name) => name.startsWith("umbrella"));
    expect(umbrella.sort()).toEqual(["umbrella-ads", "umbrella-search"]);
    for (const stack of ["acme", "globex", "initech"]) {
      expect(byStack[stack], stack).toMatchObject({ outcome: "ok", key: "kept" });
      expect(Object.keys(byStack[stack]?.changes ?? {}), stack).toEqual(["same"]);
    }
    expect(JSON.stringify(fleetKeys())).toBe(keysBefore);
    expect(["acme", "globex", "initech"].map((stack) => fs.readFileSync(stackFile(stack), "utf8"))).toEqual(files);
  }, 900_000);

  it("the README's drift, plan, shards and operator blocks run on the converged fleet, each exiting 0", async () => {
    const review = await readmeBlock("npx pulumi-proxy drift --fleet .");
    expect(review.code, review.output).toBe(0);
    expect(review.output).toContain("Fleet: 4 stacks, 0 with drift, 0 failed.");
    const plans = JSON.parse(fs.readFileSync(path.join(dir, "plan.json"), "utf8")) as FleetPlanJson;
    expect(plans).toMatchObject({ version: 1, hasChanges: false, failed: 0 });
    expect(plans.stacks.map((stack) => stack.stack)).toEqual(["acme", "globex", "initech", "umbrella"]);

    const shards = await readmeBlock("npx pulumi-proxy fleet shards");
    expect(shards.code, shards.output).toBe(0);
    expect(shards.output).toContain(JSON.stringify(["acme", "globex", "initech", "umbrella"]));

    const operator = await readmeBlock("npx pulumi-proxy fleet operator");
    expect(operator.code, operator.output).toBe(0);
    const manifests = fs.readFileSync(path.join(dir, "stacks.yaml"), "utf8");
    expect(manifests.match(/"kind": "Stack"/g)).toHaveLength(4);
    expect(manifests).toContain("https://github.com/acme/infra.git");
    // No credential in the manifests: the admin key, a stack's key, the passphrase.
    for (const secret of [server.rootKey, await acmeSecret(), env.PULUMI_CONFIG_PASSPHRASE as string]) {
      expect(manifests).not.toContain(secret);
    }
  }, 900_000);

  it("drift and plan take the fleet: every stack, one report", async () => {
    const admin = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    const crawler = (await admin.proxyUsers.list().all()).find((user) => user.name === "acme-crawler");
    await admin.proxyUsers.update(crawler?.id as string, { limits: { daily_gb: 7 } });

    const drift = await runCli(["drift", "--fleet", ".", "--json"], env, dir);
    expect(drift.code, drift.stderr).toBe(2);
    const report = JSON.parse(drift.stdout) as FleetDriftJson;
    expect(report).toMatchObject({ version: 1, drift: true, failed: 0 });
    expect(report.stacks.map((stack) => [stack.stack, stack.value?.drifted.map((d) => d.name)])).toEqual([
      ["acme", ["acme-crawler"]],
      ["globex", []],
      ["initech", []],
      ["umbrella", []],
    ]);
    expect(drift.stderr).toContain("Fleet: 4 stacks, 1 with drift, 0 failed.");
    // Said once for the whole fleet, not under each stack's table.
    expect(drift.stderr.split("PLANNED is what `pulumi up --refresh` does")).toHaveLength(2);

    const plan = await runCli(["plan", "--fleet", ".", "--refresh", "--json"], env, dir);
    expect(plan.code, plan.stderr).toBe(2);
    const plans = JSON.parse(plan.stdout) as FleetPlanJson;
    expect(plans).toMatchObject({ version: 1, hasChanges: true, failed: 0, totalCents: 0 });
    expect(plans.stacks.map((stack) => [stack.stack, stack.value?.summary.update])).toEqual([
      ["acme", 1],
      ["globex", 0],
      ["initech", 0],
      ["umbrella", 0],
    ]);
  }, 900_000);

  it("rotates keys when due, and removing a customer destroys its stack and revokes its key", async () => {
    // The keys were minted two days ago by the server's clock; a one-day schedule makes them due.
    offsetMs = 0;
    const spec = JSON.parse(fs.readFileSync(path.join(dir, "fleet.json"), "utf8"));
    fs.writeFileSync(
      path.join(dir, "fleet.json"),
      JSON.stringify({ ...spec, keys: { ...spec.keys, rotateAfterDays: 1 } }),
    );
    fs.writeFileSync(csv(), fs.readFileSync(csv(), "utf8").replace(/^initech,.*\n/gm, ""));
    const before = fleetKeys();
    const initechKey = before.find((key) => key.name === "fleet-initech") as Key;
    const oldAcmeSecret = await acmeSecret();

    const run = await fleet("up");
    expect(run.code, run.stderr).toBe(0);
    expect(run.byStack.initech).toMatchObject({ outcome: "removed", key: "revoked", changes: { delete: 2 } });
    for (const stack of ["acme", "globex", "umbrella"])
      expect(run.byStack[stack], stack).toMatchObject({ key: "rotated" });
    // `fleet up` refreshes first: acme's drift is undone, with the new secret.
    expect(run.byStack.acme?.changes).toMatchObject({ update: 1 });

    expect(keys().some((key) => key.id === initechKey.id)).toBe(false);
    expect(users().some((user) => user.name.startsWith("initech"))).toBe(false);
    expect(fs.existsSync(stackFile("initech"))).toBe(false);
    const after = fleetKeys();
    expect(after.map((key) => key.id).sort()).toEqual(
      before
        .filter((key) => key !== initechKey)
        .map((key) => key.id)
        .sort(),
    );
    for (const key of after) expect(key.last_rotated_at, key.name).not.toBeNull();

    // The new secret is the stack's config; the old one works through the grace period.
    const newAcmeSecret = await acmeSecret();
    expect(newAcmeSecret).not.toBe(oldAcmeSecret);
    for (const secret of [oldAcmeSecret, newAcmeSecret]) {
      const client = new ProxyClient({ baseUrl: server.url, apiKey: secret, maxRetries: 0 });
      await expect(client.proxyUsers.list().all()).resolves.toBeInstanceOf(Array);
      await expect(client.usage.get({ from: "2026-01-01", to: "2026-01-31" })).rejects.toBeInstanceOf(
        PermissionDeniedError,
      );
    }
  }, 900_000);
});

describe("examples/fleet: a fleet up killed as a cancelled CI job kills it", () => {
  it("leaves locks that fleet up names the fix for; recover --fleet --up finishes the run, creating nothing twice", async () => {
    // A new user, so that the killed run has a create to make.
    fs.appendFileSync(csv(), "acme,acme-extra,1,10,true\n");
    const cli = path.join(REPO_ROOT, "dist", "cli", "main.js");
    const killed = spawn(process.execPath, [cli, "fleet", "up", "--fleet", "."], {
      cwd: dir,
      env,
      detached: true,
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => killed.once("exit", resolve));
    const locks = path.join(tempDir, "backend", ".pulumi", "locks");
    const locked = () =>
      fs.existsSync(locks) && fs.readdirSync(locks, { recursive: true, withFileTypes: true }).some((e) => e.isFile());
    for (const deadline = Date.now() + 120_000; !locked(); ) {
      if (Date.now() > deadline) throw new Error("no stack was locked within 2 minutes of fleet up");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The whole process group, as a runner cancelling a job does.
    process.kill(-(killed.pid as number), "SIGKILL");
    await exited;
    // The language hosts are not in the job's process group: each sees its engine gone and exits
    // (test/foundation/killedEngine.test.ts); none may outlive that.
    let left = processesIn(dir);
    for (const deadline = Date.now() + 60_000; left.length > 0 && Date.now() < deadline; left = processesIn(dir)) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(left, "no engine, host or program of the killed run is left").toEqual([]);

    const refused = await fleet("up");
    expect(refused.code).toBe(1);
    const lockedStacks = Object.values(refused.byStack).filter((result) => result.outcome === "failed");
    expect(lockedStacks.length).toBeGreaterThan(0);
    for (const result of lockedStacks) expect(result.error).toContain("pulumi-proxy recover --fleet");

    const recovered = await runCli(["recover", "--fleet", ".", "--up", "--json"], env, dir);
    expect(recovered.code, recovered.stderr).toBe(0);
    const report = JSON.parse(recovered.stdout) as FleetRecoverJson;
    expect(report).toMatchObject({ version: 1, recovered: true });
    expect(report.stacks.map((stack) => [stack.stack, stack.value?.recovered])).toEqual([
      ["acme", true],
      ["globex", true],
      ["umbrella", true],
    ]);
    expect(recovered.stderr).toContain("Fleet: 3 stacks, 3 with a run finished, 0 failed.");

    // Converged by recover's own up: the new user once, nothing twice. That the recovered stacks take
    // the next fleet command, their locks released, is the clean-up's test below.
    const names = users().map((user) => user.name);
    expect(names.filter((name) => name === "acme-extra")).toHaveLength(1);
    expect(new Set(names).size).toBe(names.length);
    expect(
      fleetKeys()
        .map((key) => key.name)
        .sort(),
    ).toEqual(["fleet-acme", "fleet-globex", "fleet-umbrella"]);
  }, 900_000);

  it("the README's clean-up destroys every stack, revokes every key and removes every stack", async () => {
    const cleanUp = await readmeBlock("npx pulumi-proxy fleet destroy");
    expect(cleanUp.code, cleanUp.output).toBe(0);
    expect(cleanUp.output).toContain("3 stacks, 0 failed.");
    const byStack = tableRows(cleanUp.output);
    for (const stack of ["acme", "globex", "umbrella"]) {
      expect(byStack[stack], stack).toMatchObject({ outcome: "removed", key: "revoked" });
      expect(byStack[stack]?.changes.delete, stack).toBeGreaterThan(0);
    }
    expect(users()).toEqual([]);
    expect(keys().map((key) => key.name)).toEqual(["root"]);
    expect(fs.readdirSync(dir).filter((file) => /^Pulumi\..+\.yaml$/.test(file))).toEqual([]);
    const stacks = path.join(tempDir, "backend", ".pulumi", "stacks");
    const left = fs.readdirSync(stacks, { recursive: true }) as string[];
    expect(left.filter((file) => /\.json(\.gz)?$/.test(file))).toEqual([]);
  }, 900_000);
});

/** acme's key as its stack config holds it, decrypted the way a user would read it. */
async function acmeSecret(): Promise<string> {
  const workspace = await LocalWorkspace.create({ workDir: dir, envVars: env });
  return (await workspace.getConfig("acme", "proxy:apiKey")).value;
}
