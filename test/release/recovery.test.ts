import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { outsideFolder } from "../support/outside";
import { fleetOfPythonPrograms } from "./fleetFromRelease";
import { credentialsConfig } from "./nodeFree";
import { NodeFreePythonMachine, type Ran } from "./nodeFreePython";
import { sharedRelease } from "./releaseFolder";

/**
 * What issue 46 promised a Python user with the release alone and no Node.js: after a `pulumi up`
 * killed with SIGKILL in the middle of 100 creates, the recovery the docs give (docs/guides/recovery.md,
 * docs/commands/recover.md), run with the plugin's executable as `pulumi-proxy`, leaves every object
 * once and charged once; and `pulumi-proxy fleet` runs a Python program's stacks. The run is the
 * guide's, without checkpoints; test/cli/recover.test.ts recovers runs killed with checkpoints (the
 * same command, which the executable bundles).
 */

const USERS = 100;
const USER_NAMES = Array.from({ length: USERS }, (_, number) => `crawler-${String(number).padStart(3, "0")}`);
/** The creates that complete before the server starts holding replies: the state records these. */
const COMPLETED_BEFORE_HOLD = 30;
/** The creates whose replies the server then holds, with the address's: in flight when the run is killed. */
const HELD_USERS = 5;
/** An ISP address, charged one 30-day term up front (contract/pricing.ts); proxy users are free. */
const ISP_TERM_CENTS = 300;
const START_BALANCE_CENTS = 10_000;

const PROGRAM = `import pulumi
import pulumi_proxy as proxy

# Declared first, so that its create is among the first in flight when the run is killed.
office = proxy.IpAllocation("office", product="isp", country="de", city="berlin")
for number in range(${USERS}):
    name = f"crawler-{number:03}"
    proxy.ProxyUser(name, name=name)
pulumi.export("office", office.id)
`;

const outside = outsideFolder();
let machine: NodeFreePythonMachine;
let app: string;

beforeAll(async () => {
  const release = await sharedRelease();
  machine = await NodeFreePythonMachine.create(path.join(outside.dir, "machine"), release);
  app = machine.program("crawlers", { "__main__.py": PROGRAM });
  // The build (shared with release.test.ts) compiles five platforms' executables.
}, 900_000);
afterAll(() => outside.cleanup());

const output = (ran: Ran) => `${ran.stdout}\n${ran.stderr}`;

/**
 * A stack of the program on a server of its own, whose `pulumi up` is killed with SIGKILL (the CLI
 * and every process below it) once the server has created 30 users and holds the replies of the
 * next writes: the address and some users exist at the API, and the killed run never heard of them.
 */
async function killedUp(stack: string, env: NodeJS.ProcessEnv) {
  let created = 0;
  const server: ReferenceServer = await startReferenceServer({
    rateLimitPerMinute: 100_000,
    balanceCents: START_BALANCE_CENTS,
    log: (line) => {
      if (!/ POST \/v1\/proxy-users 201 /.test(line) || ++created !== COMPLETED_BEFORE_HOLD) return;
      server.injectFault({ method: "POST", path: "/v1/proxy-users", kind: "hold", count: HELD_USERS });
    },
  });
  server.injectFault({ method: "POST", path: "/v1/ips", kind: "hold", count: 1 });
  try {
    return await killInTheMiddle(server, stack, env);
  } catch (error) {
    await server.close();
    throw error;
  }
}

async function killInTheMiddle(server: ReferenceServer, stack: string, env: NodeJS.ProcessEnv) {
  await machine.must("pulumi", ["stack", "init", stack, "--non-interactive"], app, env);
  await machine.must("pulumi", credentialsConfig(server.url, server.rootKey), app, env);

  const up = await machine.start("pulumi", ["up", "--yes", "--skip-preview", "--non-interactive"], app, env);
  const held = Promise.race([
    server.waitForHeldReplies(1 + HELD_USERS, 240_000),
    up.exited.then((ran) => Promise.reject(new Error(`pulumi up ended before the kill:\n${output(ran)}`))),
  ]);
  // Killed whatever happens: a run left behind would hold its writes open for the rest of the suite.
  await held.catch(async (error) => {
    await up.kill();
    throw error;
  });
  const atKill = server.control.snapshot().proxyUsers.length;
  expect((await up.kill()).signal).toBe("SIGKILL");
  server.releaseHeldReplies();
  expect(atKill, "the kill lands in the middle of the creates").toBeGreaterThanOrEqual(
    COMPLETED_BEFORE_HOLD + HELD_USERS,
  );
  expect(atKill).toBeLessThan(USERS);
  return server;
}

/** Every user once with the program's names, the address once and charged once, and nothing left to do. */
async function expectConverged(server: ReferenceServer, stack: string, env: NodeJS.ProcessEnv) {
  const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
  const names = (await api.proxyUsers.list({ limit: 200 }).all()).map((user) => user.name);
  expect(names).toHaveLength(USERS);
  expect(new Set(names).size, "no name twice").toBe(USERS);
  expect([...names].sort()).toEqual(USER_NAMES);
  expect(await api.ips.list().all()).toHaveLength(1);
  const charges = await api.billing.charges().all();
  expect(charges.map(({ kind, amount_cents }) => ({ kind, amount_cents }))).toEqual([
    { kind: "ip_allocation", amount_cents: ISP_TERM_CENTS },
  ]);
  expect((await api.billing.balance()).balance_cents).toBe(START_BALANCE_CENTS - ISP_TERM_CENTS);

  const exported = await machine.must("pulumi", ["stack", "export", "--stack", stack], app, env);
  const types = (JSON.parse(exported.stdout).deployment.resources as { type: string }[]).map(({ type }) => type);
  expect(types.filter((type) => type === "proxy:index:ProxyUser")).toHaveLength(USERS);
  expect(types.filter((type) => type === "proxy:index:IpAllocation")).toHaveLength(1);
  const quiet = await machine.run("pulumi", ["preview", "--expect-no-changes", "--stack", stack], app, env);
  expect(quiet.code, output(quiet)).toBe(0);
}

describe("a Python program's `pulumi up`, killed in the middle of 100 creates, recovered with the release's executable", () => {
  it("without checkpoints: `pulumi-proxy recover --stack <stack> --up`, as docs/guides/recovery.md gives it", async () => {
    // As a user exports it for every run of the stack: the killed run recorded nothing at all.
    const env = { PULUMI_SKIP_CHECKPOINTS: "true" };
    const server = await killedUp("no-checkpoints", env);
    try {
      await machine.linkTool();
      const recovered = await machine.run("pulumi-proxy", ["recover", "--stack", "no-checkpoints", "--up"], app, env);
      expect(recovered.code, output(recovered)).toBe(0);
      await expectConverged(server, "no-checkpoints", env);
    } finally {
      await server.close();
    }
  });
});

describe("`pulumi-proxy fleet` of a Python program, with the release's executable and no Node.js", () => {
  it("runs each customer's stack with its own narrow key, then destroys them and revokes the keys", async () => {
    await machine.linkTool();
    await fleetOfPythonPrograms(machine);
  });
});
