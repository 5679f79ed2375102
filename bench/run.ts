import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { benchGateway } from "./gateway";
import { pulumiBinDir } from "./harness";
import { installForBench } from "./install";
import type { StackShape } from "./programs";
import { benchSdk } from "./sdk";
import { benchServer } from "./server";
import { benchStack, type Parallel, type StackFigures } from "./stacks";

/**
 * `npm run bench`: every benchmark in turn, each printing its own figures; none passes or fails.
 * `node dist/bench/run.js stacks` runs only the stack cases; `--only <label>` one of them;
 * `node dist/bench/run.js gateway` only the gateway's.
 */

/**
 * The engine's parallelism does not protect the API: the SDK caps HTTP concurrency (8) and paces to
 * the key's budget, so operations beyond that wait as promises in the provider process.
 * - up and destroy: 64. Writes wait in the SDK's one FIFO queue, and a create's re-read waits behind
 *   every write queued before it. 64 keeps that queue about six seconds long at 10 requests a second:
 *   long enough that one list page answers the re-reads of dozens of creates, short enough that
 *   creates finish steadily and the engine checkpoints them while the API is still busy, not in a
 *   burst at the end (at 1000, N=500 finished every create in the last seconds).
 * - refresh: 1000, above the stack's size, so every read reaches the provider at once and one walk
 *   of the list answers them all; with 64, reads come 64 at a time and each wave re-reads a page.
 */
export const PARALLEL: Parallel = { writes: 64, refresh: 1000 };
/** The CLI's default (4 per core) for every operation, for comparison. */
const DEFAULT_PARALLEL = 4 * os.availableParallelism();

const CASES: { shape: StackShape; parallel: Parallel }[] = [
  { shape: { label: "N=50", users: 50, keys: 0, ips: 0 }, parallel: PARALLEL },
  { shape: { label: "N=200", users: 200, keys: 0, ips: 0 }, parallel: PARALLEL },
  { shape: { label: "N=500", users: 500, keys: 0, ips: 0 }, parallel: PARALLEL },
  { shape: { label: "mixed", users: 150, keys: 50, ips: 50 }, parallel: PARALLEL },
  {
    shape: { label: `N=200, CLI default -p ${DEFAULT_PARALLEL}`, users: 200, keys: 0, ips: 0 },
    parallel: { writes: DEFAULT_PARALLEL, refresh: DEFAULT_PARALLEL },
  },
];

const fixed = (value: number, digits = 1) => value.toFixed(digits);

function refreshGoal(figures: StackFigures): number {
  const { users, keys, ips } = figures.shape;
  return [users, keys, ips].filter((count) => count > 0).reduce((sum, count) => sum + Math.ceil(count / 200), 0);
}

function table(results: StackFigures[]): string {
  const timing = [
    "| stack | parallel (writes/refresh) | up s | engine floor s | rate floor s | up ratio | up requests (429s) | preview requests | refresh s | engine floor s | refresh requests (goal) | destroy s | engine floor s | destroy ratio | destroy requests (429s) |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const footprint = ["| stack | state bytes/resource | `__provider` chars | provider peak MiB |", "|---|---|---|---|"];
  for (const r of results) {
    const upRatio = r.up.seconds / Math.max(r.engineFloor.up, r.rateFloor);
    const destroyRatio = r.destroy.seconds / Math.max(r.engineFloor.destroy, r.rateFloor);
    const label = `${r.shape.label} (${r.resources})`;
    timing.push(
      `| ${label} | ${r.parallel.writes}/${r.parallel.refresh} | ${fixed(r.up.seconds)} | ${fixed(r.engineFloor.up)} | ${fixed(r.rateFloor)} | ${fixed(upRatio, 2)} | ${r.up.requests} (${r.up.rateLimited}) ` +
        `| ${r.previewRequests} | ${fixed(r.refresh.seconds)} | ${fixed(r.engineFloor.refresh)} | ${r.refresh.requests} (${refreshGoal(r)} + c) ` +
        `| ${fixed(r.destroy.seconds)} | ${fixed(r.engineFloor.destroy)} | ${fixed(destroyRatio, 2)} | ${r.destroy.requests} (${r.destroy.rateLimited}) |`,
    );
    const peak = Math.max(r.up.providerMb, r.refresh.providerMb, r.destroy.providerMb);
    footprint.push(
      `| ${label} | ${r.state.bytesPerResource} (no-op ${r.state.noopBytesPerResource}) | ${r.state.providerChars} (no-op ${r.state.noopProviderChars}) | ${peak} (no-op ${r.noopProviderMb}) |`,
    );
  }
  return `${timing.join("\n")}\n\n${footprint.join("\n")}`;
}

function machine(binDir: string): string {
  const pulumi = execFileSync(path.join(binDir, "pulumi"), ["version"], { encoding: "utf8" }).trim();
  const memGb = (os.totalmem() / 2 ** 30).toFixed(1);
  return `${new Date().toISOString().slice(0, 10)}: ${os.availableParallelism()} cores, ${memGb} GiB, node ${process.version}, pulumi ${pulumi}, load average at start ${os.loadavg()[0]!.toFixed(1)}`;
}

/** A case that breaks is reported and the run goes on; the exit code then says something broke. */
async function reportFailure<T>(work: Promise<T>): Promise<T | undefined> {
  try {
    return await work;
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
    return undefined;
  }
}

async function main(): Promise<void> {
  if (process.argv.includes("gateway")) {
    console.log("== proxy gateway ==");
    await reportFailure(benchGateway());
    return;
  }
  const stacksOnly = process.argv.includes("stacks");
  const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
  const started = performance.now();
  if (!stacksOnly) {
    console.log("== reference server ==");
    await reportFailure(benchServer());
    console.log("\n== proxy gateway ==");
    await reportFailure(benchGateway());
    console.log("\n== SDK against the rate limit ==");
    await reportFailure(benchSdk());
  }
  console.log(
    `\n== stacks against 600/min (engine parallel ${PARALLEL.writes} for up and destroy, ${PARALLEL.refresh} for refresh, unless noted) ==`,
  );
  const binDir = await pulumiBinDir();
  const installed = installForBench();
  console.log(machine(binDir));
  const results: StackFigures[] = [];
  for (const { shape, parallel } of CASES) {
    if (only && shape.label !== only) continue;
    const figures = await reportFailure(benchStack(binDir, installed, shape, parallel));
    if (figures) results.push(figures);
  }
  console.log(`\n${table(results)}`);
  console.log(
    `\nratio = wall time / max(engine floor, rate floor); rate floor = resources / 10 s. Total ${fixed((performance.now() - started) / 60_000)} min.`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
