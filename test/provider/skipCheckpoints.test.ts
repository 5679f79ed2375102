import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CLEAN_AUDIT, type Intent } from "../../harness/crash/audit";
import { CliStack, tail } from "../../harness/crash/cliStack";
import { killAndRecover, random } from "../../harness/crash/kill";
import { type MixedShape, type Phase, phases } from "../../harness/crash/scenario";
import { vaultTransit } from "../../harness/vaultTransit";
import { type ReferenceServer, ShiftedClock, startReferenceServer } from "../../server";
import { DAY_MS, HOUR_MS } from "../../server/clock";
import { REPO_ROOT } from "../support/pulumi";

/**
 * `PULUMI_SKIP_CHECKPOINTS=true`: the engine saves the state once, at the end, so a killed run records
 * nothing, not even that it started a write. A stack of 70 (users, keys, addresses interleaved) is
 * killed with SIGKILL at random points of a create, an update, a rotation, a replacement and a
 * destroy, and recovered each time with `pulumi-proxy recover` alone; then twice more with the
 * server's clock moved 25 hours on between the kill and the recovery, past the API's idempotency
 * ledger, so that only adoption (provider/core/adoption.ts) stands between the next run and a second
 * create, a second charge or a secret nobody holds. After each: no orphan, duplicate, dead id, extra
 * charge or dead secret, every object in the state.
 */

// Several times the engine's default parallelism (4 per core), so a kill finds writes of every kind in flight; the bench's
// `crash:skip` kills a stack of 2,000 the same way.
const SHAPE: MixedShape = { users: 48, keys: 12, ips: 10 };
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);

let server: ReferenceServer;
let stack: CliStack;
const clock = new ShiftedClock();
const intent: Intent = { allocations: 0, replacements: new Map() };

beforeAll(async () => {
  server = await startReferenceServer({ rateLimitPerMinute: 100_000, balanceCents: 10_000_000, clock });
  stack = await CliStack.create({
    binDir: inject("pulumiBinDir"),
    secretsProvider: await vaultTransit(),
    parentDir: path.join(REPO_ROOT, ".pulumi-proxy", "stacks"),
    apiUrl: server.url,
    apiKey: server.rootKey,
    env: { PULUMI_SKIP_CHECKPOINTS: "true" },
  });
});
afterAll(async () => {
  await stack?.cleanup();
  await server?.close();
});

/** How many times each address has been swapped this month, sorted. */
function swaps(): number[] {
  return (server.control.snapshot().ips as { replacements_this_month: number }[])
    .map((ip) => ip.replacements_this_month)
    .sort();
}

function held() {
  const snapshot = server.control.snapshot();
  return [snapshot.proxyUsers.length, snapshot.keys.length - 1, snapshot.ips.length];
}

describe(`a stack of 70 without checkpoints, killed at random points (seed ${SEED})`, () => {
  const draw = random(SEED);
  const [create, , , replace, destroy] = phases(SHAPE) as [Phase, Phase, Phase, Phase, Phase];
  // "replace" after "create": one run that updates every user, rotates every key, swaps every address
  // and replaces two users and two keys.
  const changeAll: Phase = { ...replace, writes: SHAPE.users + SHAPE.keys + replace.writes };

  it.each([create, changeAll, destroy])("is recovered after a kill while it runs $name", async (phase) => {
    const point = 1 + Math.floor(draw() * phase.writes);
    const row = await killAndRecover(server, stack, phase, point, intent, SHAPE);
    expect(row.recovery, `kill at ${row.point}`).toMatch(/ok$/);
    expect(row.audit, `kill at ${row.point}`).toEqual(CLEAN_AUDIT);
    expect(held()).toEqual(phase === destroy ? [0, 0, 0] : [SHAPE.users, SHAPE.keys, SHAPE.ips]);
    if (phase === changeAll) expect(swaps()).toEqual(Array(SHAPE.ips).fill(1));
  });

  // Killed once a drawn number of addresses is allocated (or swapped): the engine starts the users
  // first, so by then the killed run has made objects of every kind, or swapped addresses, that
  // nothing records.
  const addressWrite = { create: "POST /v1/ips", replace: "POST /v1/ips/{ip}/replace" } as Record<string, string>;
  it.each([create, changeAll])(
    "is recovered 25 hours after a kill while it runs $name, when the API replays nothing",
    async (phase) => {
      const route = addressWrite[phase.name] as string;
      const addresses = 1 + Math.floor(draw() * (SHAPE.ips - 1));
      const point = phase.writes;
      let swappedAtKill = 0;
      const row = await killAndRecover(server, stack, phase, point, intent, SHAPE, {
        beforeRecover: () => {
          swappedAtKill = swaps().filter((count) => count > 0).length;
          clock.advance(DAY_MS + HOUR_MS);
        },
        note: "25 h later",
        killWhen: (seen) => (seen[route] ?? 0) >= addresses,
      });
      if (phase === create) expect(row.unheardAtKill, "the kill left objects no state records").not.toBe(0);
      else expect(swappedAtKill, "the kill left swapped addresses no state records").toBeGreaterThan(0);
      expect(row.recovery).toMatch(/adoption, up.*ok$/);
      expect(row.audit, `kill at ${row.point}`).toEqual(CLEAN_AUDIT);
      expect(held()).toEqual([SHAPE.users, SHAPE.keys, SHAPE.ips]);
      expect(swaps()).toEqual(Array(SHAPE.ips).fill(phase === changeAll ? 1 : 0));
    },
  );

  it("then has nothing left to change", async () => {
    const quiet = await stack.run(["preview", "--expect-no-changes", "--stack", stack.stackName]);
    expect(quiet.code, tail(quiet)).toBe(0);
  });
});
