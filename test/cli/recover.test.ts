import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RecoverReport } from "../../cli/recover/steps";
import { auditCrash, CLEAN_AUDIT } from "../../harness/crash/audit";
import { CliStack, type DeclaredResource, tail } from "../../harness/crash/cliStack";
import { vaultTransit } from "../../harness/vaultTransit";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { type CliResult, runCli } from "../support/cli";
import { REPO_ROOT } from "../support/pulumi";

/**
 * `pulumi-proxy recover` after a real kill: `pulumi up` and every process below it get SIGKILL while
 * the server holds the replies of creates it has already committed, so the state records them as
 * pending and the API holds objects the state does not name. One command must bring the stack back:
 * every object once at the API, each allocation charged once, nothing pending, a clean preview. The
 * two kills run on one stack, one after the other, each adding resources; then its sidecar is damaged.
 */

const user = (name: string): DeclaredResource => ({ type: "ProxyUser", name, args: { name: `recover-${name}` } });
const ip = (name: string, city: string): DeclaredResource => ({
  type: "IpAllocation",
  name,
  args: { product: "isp", country: city === "berlin" ? "de" : "us", city },
});
const key = (name: string): DeclaredResource => ({
  type: "ApiKey",
  name,
  args: { name: `recover-${name}`, scopes: ["usage:read"] },
});

let server: ReferenceServer;
let stack: CliStack;
const declared: DeclaredResource[] = [user("steady")];

beforeAll(async () => {
  server = await startReferenceServer({ rateLimitPerMinute: 100_000, balanceCents: 100_000 });
  stack = await CliStack.create({
    binDir: inject("pulumiBinDir"),
    secretsProvider: await vaultTransit(),
    parentDir: path.join(REPO_ROOT, ".pulumi-proxy", "stacks"),
    apiUrl: server.url,
    apiKey: server.rootKey,
  });
  stack.setSpec({ resources: declared });
  const first = await stack.up();
  expect(first.code, tail(first)).toBe(0);
});
afterAll(async () => {
  await stack?.cleanup();
  await server?.close();
});

function backendDir(): string {
  return (stack.env.PULUMI_BACKEND_URL ?? "").replace(/^file:\/\//, "");
}
function sidecarFile(): string {
  return path.join(backendDir(), ".pulumi", "stacks", "pulumi-proxy-crash", `${stack.stackName}.json.attrs`);
}
function lockFiles(): string[] {
  const dir = path.join(backendDir(), ".pulumi", "locks", "organization", "pulumi-proxy-crash", stack.stackName);
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.endsWith(".json")) : [];
}

/** Declares `added` and kills the `pulumi up` once the server has committed the held creates. */
async function killUpWhileCreating(added: DeclaredResource[], held: { path: string; count: number }[]): Promise<void> {
  declared.push(...added);
  stack.setSpec({ resources: declared });
  for (const hold of held) server.injectFault({ method: "POST", ...hold, kind: "hold" });
  const count = held.reduce((sum, hold) => sum + hold.count, 0);
  // --refresh, as the deploy workflow runs it: the first request is a read, so the writes go out at once.
  const run = stack.start(["up", "--yes", "--skip-preview", "--refresh", "--stack", stack.stackName]);
  expect(await server.waitForHeldReplies(count, 120_000)).toHaveLength(count);
  expect((await run.kill()).signal).toBe("SIGKILL");
  server.releaseHeldReplies();
  expect(lockFiles(), "the killed run left the stack locked").toHaveLength(1);
}

function recover(...extra: string[]): Promise<CliResult> {
  return runCli(["recover", "--stack", stack.stackName, "--cwd", stack.dir, ...extra], {
    ...(process.env as Record<string, string>),
    ...stack.env,
  });
}

/** What the server holds matches the declaration exactly once, and the stack has nothing left to do. */
async function expectConsistent(): Promise<void> {
  const allocations = declared.filter((resource) => resource.type === "IpAllocation").length;
  const audit = await auditCrash(server, await stack.exportState(), { allocations, replacements: new Map() });
  expect(audit).toEqual(CLEAN_AUDIT);
  const held = server.control.snapshot();
  const count = (type: string) => declared.filter((resource) => resource.type === type).length;
  expect(held.proxyUsers).toHaveLength(count("ProxyUser"));
  expect(held.keys).toHaveLength(count("ApiKey") + 1); // and the root key
  expect(held.ips).toHaveLength(allocations);
  expect((held.charges as { kind: string }[]).filter((charge) => charge.kind === "ip_allocation")).toHaveLength(
    allocations,
  );
  expect(lockFiles()).toEqual([]);
  const quiet = await stack.run(["preview", "--expect-no-changes", "--stack", stack.stackName]);
  expect(quiet.code, tail(quiet)).toBe(0);
}

describe("pulumi-proxy recover after a pulumi up killed with SIGKILL", () => {
  it("finishes the up from the pending creates alone, replaying them, and says what it did", async () => {
    await killUpWhileCreating(
      [user("new-a"), user("new-b"), key("new-key"), ip("new-ip", "berlin")],
      [
        { path: "/v1/proxy-users", count: 2 },
        { path: "/v1/keys", count: 1 },
        { path: "/v1/ips", count: 1 },
      ],
    );
    const sidecar = fs.readFileSync(sidecarFile());
    expect(sidecar.length).toBeGreaterThan(0);

    // The creates in flight show it was an up: finishing a destroy instead would orphan their objects.
    const wrong = await recover("--destroy");
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`stack ${stack.stackName}: the killed run was a \`pulumi up\``);
    expect(wrong.stderr).toMatch(
      /it was creating (ProxyUser new-a|ProxyUser new-b|ApiKey new-key|IpAllocation new-ip)/,
    );
    expect(wrong.stderr).toContain(`pulumi-proxy recover --stack ${stack.stackName} --up`);
    expect(lockFiles(), "a refused recovery leaves the lock alone").toHaveLength(1);

    const result = await recover("--json");
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const report = JSON.parse(result.stdout) as RecoverReport;
    expect(report).toMatchObject({ stack: stack.stackName, recovered: true, operation: "up" });
    // The engine saves its records of started writes in batches: some of the four may be missing.
    expect(report.pendingBefore.length).toBeGreaterThan(0);
    for (const op of report.pendingBefore) {
      expect([
        "creating ProxyUser new-a",
        "creating ProxyUser new-b",
        "creating ApiKey new-key",
        "creating IpAllocation new-ip",
      ]).toContain(op);
    }
    expect(report.steps.map((step) => step.action)).toEqual([
      "read-state",
      "unlock",
      "adoption",
      "up",
      "clear-pending",
    ]);
    // Since the first up ended, nothing the state lacks can be anyone's but the killed run's.
    expect(report.steps.find((step) => step.action === "adoption")?.detail).toContain("last completed update");
    expect(report.steps.find((step) => step.action === "up")?.detail).toContain("a destroy never does");
    // The human-readable log goes to stderr with --json.
    expect(result.stderr).toContain("released the lock the killed run left");
    expect(fs.existsSync(sidecarFile()), "the non-empty sidecar is kept").toBe(true);
    await expectConsistent();
  });

  it("removes an empty <stack>.json.attrs, which fails every command, and recovers", async () => {
    await killUpWhileCreating(
      [user("new-c"), ip("new-ip-2", "new york")],
      [
        { path: "/v1/proxy-users", count: 1 },
        { path: "/v1/ips", count: 1 },
      ],
    );
    // What a kill during the CLI's save leaves: the sidecar created, not yet filled.
    fs.truncateSync(sidecarFile(), 0);
    const broken = await stack.run(["stack", "export", "--stack", stack.stackName]);
    expect(broken.stderr).toContain("failed to load checkpoint");

    const result = await recover("--up");
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain(`- removed ${sidecarFile()}: it was empty`);
    expect(result.stdout).toContain("ran `pulumi up` (you said a `pulumi up` was killed)");
    expect(result.stdout).toContain(`pulumi-proxy recover: stack ${stack.stackName} is consistent`);
    await expectConsistent();
  });

  it("releases a lock file a kill left empty, which the engine reads only as unexpected end of JSON input", async () => {
    // What a kill as the CLI writes its lock leaves: the file created, not yet filled.
    const lockDir = path.join(backendDir(), ".pulumi", "locks", "organization", "pulumi-proxy-crash", stack.stackName);
    fs.mkdirSync(lockDir, { recursive: true });
    fs.writeFileSync(path.join(lockDir, "00000000-0000-4000-8000-000000000000.json"), "");
    const broken = await stack.run(["up", "--yes", "--stack", stack.stackName]);
    expect(broken.code).not.toBe(0);
    expect(broken.stdout + broken.stderr).toContain("unexpected end of JSON input");

    const result = await recover("--up");
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain(`pulumi-proxy recover: stack ${stack.stackName} is consistent`);
    await expectConsistent();
  });

  it("never deletes a sidecar that holds data: it stops, names the file and the fix", async () => {
    // A sidecar damaged some other way than a kill's empty file: recover must not guess it away.
    fs.writeFileSync(sidecarFile(), "{not the backend's metadata");
    const damaged = fs.readFileSync(sidecarFile());

    const refused = await recover();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`stack ${stack.stackName}: the backend cannot load the state`);
    expect(refused.stderr).toContain(`${sidecarFile()}, ${damaged.length} bytes`);
    expect(refused.stderr).toContain("recover deletes no file that holds data");
    expect(fs.readFileSync(sidecarFile())).toEqual(damaged);

    // The fix the message names, done as a person would; then the command finds nothing left to do.
    expect(refused.stderr).toContain(`mv ${sidecarFile()} ${sidecarFile()}.broken`);
    fs.renameSync(sidecarFile(), `${sidecarFile()}.broken`);
    const result = await recover("--json");
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect((JSON.parse(result.stdout) as RecoverReport).steps.map((step) => step.detail)).toEqual([
      "the state records no operation in flight",
      "the stack was not locked",
      "the stack is not locked and records no operation in flight: no run was killed",
    ]);
    await expectConsistent();
  });
});
