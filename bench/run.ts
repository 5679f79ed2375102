import os from "node:os";
import { benchConsole, benchReport } from "./console";
import { benchConsoleStreams } from "./consoleStreams";
import { benchCrash, killTable, SKIP_CHECKPOINTS_SHAPE } from "./crash/bench";
import { benchChaosDestroy, chaosTable } from "./crash/chaosDestroy";
import { benchFleet, FLEET_GOAL_SHAPE, type FleetSettings, fleetTable } from "./fleet";
import { benchGateway } from "./gateway";
import { pulumiBinDir, STACKS_DIR } from "./harness";
import { type Installed, installForBench } from "./install";
import { benchPluginStart } from "./pluginStart";
import { benchPreview, type PreviewFigures, previewTable } from "./preview";
import type { StackShape } from "./programs";
import { footprintTable, loadAverage, machine, stackTable } from "./report";
import { benchScale, extrapolate, type ScaleFigures, scaleTable } from "./scale";
import { benchSdk, type SdkFigures, sdkTable } from "./sdk";
import { benchServer } from "./server";
import { benchStack, type Parallel, type StackFigures, type StackOptions } from "./stacks";

/**
 * `npm run bench`: every case below in turn, each printing its own figures, then the tables; none
 * passes or fails. `npm run bench -- --only <id>[,<id>…]` runs the cases whose id is given or starts
 * with it and a colon (`--only stack:n500` runs both of N=500's cases, `--only stack` all stacks).
 *
 * To add a case, add an entry to CASES: an id, and a `run` that prints its figures and may leave
 * rows in `results` for the tables at the end.
 */

interface Results {
  stacks: StackFigures[];
  sdk: SdkFigures[];
  scale: ScaleFigures[];
  preview: PreviewFigures[];
}

interface BenchCase {
  id: string;
  run(results: Results): Promise<void>;
}

/** The CLI's default parallelism is 4 × GOMAXPROCS, so 4 per core; the stack cases leave it unset. */
export const CLI_DEFAULT_PARALLEL = 4 * os.availableParallelism();

/**
 * The values tuned under the old pacer, kept as the comparison: 64 for up and destroy (the SDK's
 * queue stays short while one list page answers dozens of re-reads), 1000 for refresh (every read
 * reaches the provider at once and one walk of each list answers them all).
 */
export const TUNED: Parallel = { writes: 64, refresh: 1000 };

/**
 * N=2000 runs with PULUMI_SKIP_CHECKPOINTS, for the no-op floor as for the real stack: the file
 * backend rewrites the whole snapshot after every step, which makes an up of 2000 cost minutes of
 * checkpoints alone on this machine and would hide the provider behind them. One round: its up and
 * destroy wait out three window resets, so the window schedule, not the engine's noise, sets them.
 */
const LARGE: StackOptions = { env: { PULUMI_SKIP_CHECKPOINTS: "true" }, rounds: 1 };

const SHAPES: (StackShape & { id: string; options?: StackOptions })[] = [
  { id: "n50", label: "N=50", users: 50, keys: 0, ips: 0 },
  { id: "n200", label: "N=200", users: 200, keys: 0, ips: 0 },
  { id: "n500", label: "N=500", users: 500, keys: 0, ips: 0 },
  { id: "n2000", label: "N=2000", users: 2000, keys: 0, ips: 0, options: LARGE },
  { id: "mixed", label: "mixed", users: 150, keys: 50, ips: 50 },
];

let stackSetup: Promise<{ binDir: string; installed: Installed }> | undefined;
/** The CLI and the installed package, prepared once and only if a stack case runs. */
function stackEnvironment() {
  stackSetup ??= pulumiBinDir().then((binDir) => {
    console.log(machine(binDir));
    return { binDir, installed: installForBench() };
  });
  return stackSetup;
}

function stackCase(id: string, shape: StackShape, parallel: Parallel, options: StackOptions = {}): BenchCase {
  return {
    id,
    async run(results) {
      const { binDir, installed } = await stackEnvironment();
      results.stacks.push(await benchStack(binDir, installed, shape, parallel, options));
    },
  };
}

/** `--only scale`: one native stack of N users at the real limit, with and without checkpoints (scale.ts). */
const SCALE_CASES: BenchCase[] = [
  ...[2000, 5000, 10_000].map((n) => ({ n, mode: "skip" as const })),
  // With checkpoints the engine's time grows with N²: 2,000, 5,000 and 10,000 are extrapolated from this run.
  { n: 1000, mode: "default" as const },
].map(({ n, mode }) => ({
  id: `scale:n${n}:${mode}`,
  async run(results: Results) {
    const { binDir, installed } = await stackEnvironment();
    results.scale.push(await benchScale(binDir, installed, n, mode));
  },
}));

function fleetCase(id: string, settings: FleetSettings, label: string): BenchCase {
  return {
    id,
    async run() {
      const { binDir } = await stackEnvironment();
      const figures = await benchFleet(binDir, FLEET_GOAL_SHAPE, settings);
      console.log(`\n${fleetTable(figures, FLEET_GOAL_SHAPE, label)}`);
    },
  };
}

/** `--only preview`: the preview of an up-to-date native stack of N users beside its no-op plugin floor (preview.ts). */
const PREVIEW_CASES: BenchCase[] = [2000, 5000, 10_000].map((n) => ({
  id: `preview:n${n}`,
  async run(results: Results) {
    const { binDir, installed } = await stackEnvironment();
    results.preview.push(await benchPreview(binDir, installed, n));
  },
}));

const CASES: BenchCase[] = [
  { id: "server", run: () => benchServer() },
  { id: "gateway", run: () => benchGateway() },
  // Issue 34's goal: the self-contained plugin starts within 1.2 × the package's entry.
  { id: "plugin:start", run: () => benchPluginStart() },
  // Issue 36 (report, page) and 44 (streams): `--only console` runs all three.
  { id: "console:report", run: () => benchReport() },
  { id: "console:page", run: () => benchConsole() },
  // Issue 44's goal: a thousand streams, one never reading, cost the API < 1.2 × its p99, the server < 300 MiB.
  { id: "console:streams", run: () => benchConsoleStreams() },
  {
    id: "sdk",
    async run(results) {
      results.sdk.push(...(await benchSdk()));
    },
  },
  ...SHAPES.map(({ id, options, ...shape }) => stackCase(`stack:${id}:default`, shape, {}, options)),
  ...SHAPES.map(({ id, options, ...shape }) => stackCase(`stack:${id}:tuned`, shape, TUNED, options)),
  // The native provider beside the dynamic resources (issue 22's goal): `--only stack:n500:native`.
  stackCase("stack:n500:native", { label: "N=500 native", users: 500, keys: 0, ips: 0 }, {}, { native: true }),
  stackCase("stack:mixed:native", { label: "mixed native", users: 150, keys: 50, ips: 50 }, {}, { native: true }),
  ...SCALE_CASES,
  // Issue 48's goal: the provider adds at most 10 % to the preview's floor.
  ...PREVIEW_CASES,
  stackCase("stack:crowded:n200", { label: "N=200", users: 200, keys: 0, ips: 0 }, {}, { crowd: 0.8 }),
  stackCase("stack:crowded:n500", { label: "N=500", users: 500, keys: 0, ips: 0 }, {}, { crowd: 0.8 }),
  // `--only fleet`: 10,000 users in 20 stacks of 500, each with its own key (issues 35 and 48): the
  // fleet file's defaults (no checkpoints, 4 stacks at a time); `fleet:checkpoints` with the engine's
  // checkpoints turned back on; `fleet:concurrency-<n>` with n stacks at a time.
  fleetCase("fleet:default", {}, "the fleet file's defaults"),
  fleetCase("fleet:checkpoints", { checkpoints: true }, '"checkpoints": true'),
  ...[2, 8].map((n) => fleetCase(`fleet:concurrency-${n}`, { concurrency: n }, `"concurrency": ${n}`)),
  // `--only crash`: a mixed stack SIGKILLed at 20 random points and recovered as the README says, then
  // a destroy under 20 % faults that must converge in one run.
  {
    id: "crash:kills",
    async run() {
      const { binDir } = await stackEnvironment();
      console.log(`\n${killTable(await benchCrash(binDir, STACKS_DIR))}`);
    },
  },
  // `--only crash:skip`: 2,000 objects under PULUMI_SKIP_CHECKPOINTS, 20 kills. The rate limit is lifted
  // (100,000 a minute): what is measured is what a kill leaves, and at 600 a minute the 20 recoveries
  // of 2,000 would take over an hour of window waits.
  {
    id: "crash:skip",
    async run() {
      const { binDir } = await stackEnvironment();
      const rows = await benchCrash(binDir, STACKS_DIR, {
        shape: SKIP_CHECKPOINTS_SHAPE,
        rateLimitPerMinute: 100_000,
        env: { PULUMI_SKIP_CHECKPOINTS: "true" },
      });
      console.log(`\n${killTable(rows)}`);
    },
  },
  {
    id: "crash:chaos-destroy",
    async run() {
      const { binDir } = await stackEnvironment();
      console.log(`\n${chaosTable(await benchChaosDestroy(binDir, STACKS_DIR))}`);
    },
  },
];

function selected(args: string[]): BenchCase[] {
  const at = args.indexOf("--only");
  const wanted = at >= 0 ? (args[at + 1] ?? "").split(",").filter(Boolean) : args.includes("stacks") ? ["stack"] : [];
  if (wanted.length === 0) return CASES;
  const matches = (id: string) => wanted.some((w) => id === w || id.startsWith(`${w}:`));
  const chosen = CASES.filter((c) => matches(c.id));
  if (chosen.length === 0)
    throw new Error(`no bench case matches ${wanted.join(",")}; ids: ${CASES.map((c) => c.id).join(", ")}`);
  return chosen;
}

async function main(): Promise<void> {
  const started = performance.now();
  const results: Results = { stacks: [], sdk: [], scale: [], preview: [] };
  console.log(`bench started ${new Date().toISOString()}, ${loadAverage()}`);
  for (const c of selected(process.argv.slice(2))) {
    console.log(`\n== ${c.id} ==`);
    try {
      await c.run(results);
    } catch (error) {
      // A case that breaks is reported and the run goes on; the exit code then says something broke.
      console.error(error);
      process.exitCode = 1;
    }
  }
  if (results.sdk.length > 0) console.log(`\n${sdkTable(results.sdk)}`);
  if (results.scale.length > 0) console.log(`\n${scaleTable(results.scale)}`);
  if (results.preview.length > 0) console.log(`\n${previewTable(results.preview)}`);
  const checkpointed = results.scale.find((run) => run.mode === "default");
  for (const n of checkpointed ? [2000, 5000, 10_000] : []) {
    const { up, destroy } = extrapolate(checkpointed as ScaleFigures, n);
    console.log(
      `N=${n} default checkpoints, extrapolated from N=${checkpointed?.n}: up ${up.toFixed(0)} s, destroy ${destroy.toFixed(0)} s`,
    );
  }
  if (results.stacks.length > 0) {
    console.log(`\n${stackTable(results.stacks)}\n\n${footprintTable(results.stacks)}`);
    console.log(
      `\nratio = wall time / max(engine floor, window floor). Window floor: 60 s × (⌈R/600⌉ − 1) in a fresh window, ` +
        `R = unavoidable requests; CLI default -p = ${CLI_DEFAULT_PARALLEL}.`,
    );
  }
  console.log(
    `\nbench finished ${new Date().toISOString()}, ${loadAverage()}; ${((performance.now() - started) / 60_000).toFixed(1)} min.`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
