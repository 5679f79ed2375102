import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { auditCrash, CLEAN_AUDIT, type Intent } from "../../harness/crash/audit";
import { CliStack, type DeclaredResource, tail } from "../../harness/crash/cliStack";
import { vaultTransit } from "../../harness/vaultTransit";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { REPO_ROOT } from "../support/pulumi";

/**
 * A CI job cancelled in the middle of `pulumi up`: the CLI and every process below it get SIGKILL
 * while creates, a key rotation, a key replacement and an address replacement are in flight. The
 * server holds each of those replies after its change committed, so the test knows exactly what the
 * killed run did without hearing of it. Then the user recovers as the README says, and nothing may
 * be orphaned, duplicated, charged twice or left with a secret that does not work.
 */

const STACKS = path.join(REPO_ROOT, ".pulumi-proxy", "stacks");

const before: DeclaredResource[] = [
  { type: "ProxyUser", name: "steady", args: { name: "crash-steady", limits: { dailyGb: 1, monthlyGb: 10 } } },
  { type: "ApiKey", name: "rotating", args: { name: "crash-rotating", scopes: ["usage:read"], rotationTrigger: "r1" } },
  { type: "ApiKey", name: "rescoped", args: { name: "crash-rescoped", scopes: ["usage:read"] } },
  {
    type: "IpAllocation",
    name: "moving",
    args: { product: "isp", country: "de", city: "berlin", replaceTrigger: "t1" },
  },
];

/** The run that gets killed: two new users, a new key, a new address, a rotation, a key and an address replaced. */
const after: DeclaredResource[] = [
  ...before.map((resource) => {
    if (resource.name === "rotating") return { ...resource, args: { ...resource.args, rotationTrigger: "r2" } };
    if (resource.name === "rescoped")
      return { ...resource, args: { ...resource.args, scopes: ["usage:read", "proxy-users:read"] } };
    if (resource.name === "moving") return { ...resource, args: { ...resource.args, replaceTrigger: "t2" } };
    return resource;
  }),
  { type: "ProxyUser", name: "new-a", args: { name: "crash-new-a", limits: { monthlyGb: 50 } } },
  { type: "ProxyUser", name: "new-b", args: { name: "crash-new-b" } },
  { type: "ApiKey", name: "new-key", args: { name: "crash-new-key", scopes: ["proxy-users:read"] } },
  { type: "IpAllocation", name: "new-ip", args: { product: "isp", country: "us", city: "new york" } },
];

const HELD = [
  { method: "POST", path: "/v1/proxy-users", count: 2 },
  { method: "POST", path: "/v1/keys", count: 2 },
  { method: "POST", path: "/v1/ips", count: 1 },
  { method: "POST", path: "/v1/keys/{id}/rotate", count: 1 },
  { method: "POST", path: "/v1/ips/{ip}/replace", count: 1 },
];
const HELD_COUNT = HELD.reduce((sum, hold) => sum + hold.count, 0);

let server: ReferenceServer;
let stack: CliStack;

beforeAll(async () => {
  server = await startReferenceServer({ rateLimitPerMinute: 100_000, balanceCents: 100_000 });
  stack = await CliStack.create({
    binDir: inject("pulumiBinDir"),
    secretsProvider: await vaultTransit(),
    parentDir: STACKS,
    apiUrl: server.url,
    apiKey: server.rootKey,
  });
});
afterAll(async () => {
  await stack?.cleanup();
  await server?.close();
});

describe("a pulumi up killed with SIGKILL mid-flight", () => {
  it("recovers with no orphan, duplicate, extra charge or dead secret", async () => {
    stack.setSpec({ resources: before });
    const first = await stack.up();
    expect(first.code, tail(first)).toBe(0);

    stack.setSpec({ resources: after });
    for (const hold of HELD) server.injectFault({ ...hold, kind: "hold" });
    // --refresh makes the first request a read, so the SDK learns the rate window from an answer
    // that is not held and sends the writes at once.
    const killed = stack.start(["up", "--yes", "--skip-preview", "--refresh"]);
    const inFlight = await server.waitForHeldReplies(HELD_COUNT, 240_000);
    expect(inFlight).toHaveLength(HELD_COUNT);
    const result = await killed.kill();
    expect(result.signal).toBe("SIGKILL");
    server.releaseHeldReplies();

    const intent: Intent = { allocations: 2, replacements: new Map([["moving", 1]]) };
    const damage = await auditCrash(server, await stack.exportState(), intent);
    // The kill did land mid-flight: five objects exist that the state does not know yet.
    expect(damage.orphans).toHaveLength(5);
    expect(damage.pendingOperations).toBeGreaterThanOrEqual(HELD_COUNT);

    // Recovery as README "When a run is killed" says.
    const cancel = await stack.run(["cancel", "--yes", "--stack", stack.stackName]);
    expect(cancel.code, tail(cancel)).toBe(0);
    const again = await stack.up();
    expect(again.code, tail(again)).toBe(0);
    const cleared = await stack.run(["refresh", "--yes", "--skip-preview", "--clear-pending-creates"]);
    expect(cleared.code, tail(cleared)).toBe(0);

    const audit = await auditCrash(server, await stack.exportState(), intent);
    expect(audit).toEqual(CLEAN_AUDIT);
    const held = server.control.snapshot();
    expect(held.proxyUsers).toHaveLength(3);
    expect(held.keys).toHaveLength(4); // root, rotating, rescoped (replaced once), new-key
    expect(held.ips).toHaveLength(2);

    const quiet = await stack.run(["preview", "--expect-no-changes", "--stack", stack.stackName]);
    expect(quiet.code, tail(quiet)).toBe(0);
    const destroyed = await stack.run(["destroy", "--yes", "--skip-preview", "--stack", stack.stackName]);
    expect(destroyed.code, tail(destroyed)).toBe(0);
    const left = server.control.snapshot();
    expect([left.proxyUsers.length, left.ips.length, left.keys.length]).toEqual([0, 0, 1]);
  });
});
