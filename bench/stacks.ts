import { execFileSync } from "node:child_process";
import path from "node:path";
import type { PulumiFn, Stack } from "@pulumi/pulumi/automation";
import { startReferenceServer } from "../server";
import { createBenchStack, ProviderMemory, REPO_ROOT, timed, WindowClock } from "./harness";
import type { Installed } from "./install";
import { type Measured, phase, RATE_LIMIT_PER_MINUTE, RequestSpan } from "./phase";
import { noopProgram, realProgram, replayProgram, resourceCount, type StackShape } from "./programs";
import type { Recorded } from "./replay";

/**
 * One stack shape through up, preview, refresh and destroy against the reference server at its real
 * limit, next to the same stack behind a no-op provider (the engine floor). Each measured phase
 * starts as a rate-limit window opens; in a crowded case another client of the same key first
 * spends part of that window.
 */

export type { Measured } from "./phase";

/** Engine parallelism: `writes` for up, preview and destroy; `refresh` for refresh; absent: the CLI's default. */
export interface Parallel {
  writes?: number;
  refresh?: number;
}

export interface StackFigures {
  shape: StackShape;
  resources: number;
  parallel: Parallel;
  engineFloor: PhaseSeconds;
  /** The same stack behind a provider that replays a real run's state with no requests (replay.ts). */
  sameStateFloor: PhaseSeconds;
  /** Share of each phase's window another client of the key spent before the phase (0: none). */
  crowd: number;
  env: Record<string, string>;
  up: Measured;
  previewRequests: number;
  refresh: Measured;
  destroy: Measured;
  state: { bytesPerResource: number; providerChars: number; noopBytesPerResource: number; noopProviderChars: number };
  /** Peak VmHWM of the no-op provider's process during its up, MiB: what the provider host costs by itself. */
  noopProviderMb: number;
}

export type PhaseSeconds = { up: number; refresh: number; destroy: number };

export interface StackOptions {
  /** Share of each phase's window another client of the key spends first (0: none). */
  crowd?: number;
  /** Environment of both the real and the no-op stack's CLI, e.g. PULUMI_SKIP_CHECKPOINTS. */
  env?: Record<string, string>;
  /** Runs of the real stack and of its no-op twin, alternating; each phase reports the quickest of each. Default 2. */
  rounds?: number;
  /**
   * The real stack on the native provider (the plugin `pulumi-proxy provider install` puts in the
   * stack's plugin cache). Its twins stay dynamic: the same-state twin replays the native run's
   * outputs, plus the one require() line a dynamic resource stores, so its floor is if anything higher.
   */
  native?: boolean;
}

export function describeParallel(parallel: Parallel): string {
  const value = (p: number | undefined) => (p === undefined ? "CLI default" : String(p));
  return parallel.writes === parallel.refresh
    ? value(parallel.writes)
    : `${value(parallel.writes)} (refresh ${value(parallel.refresh)})`;
}

function log(message: string): void {
  process.stdout.write(`  ${message}\n`);
}

function describe(m: Measured): string {
  const span = `requests from ${m.firstRequest.toFixed(1)} s to ${m.lastRequest.toFixed(1)} s, longest pause ${m.longestPause.toFixed(1)} s`;
  return `${m.seconds.toFixed(1)} s, ${m.requests} requests (${span}), ${m.rateLimited} 429s, provider ${m.providerMb} MiB ${JSON.stringify(m.byRoute)}`;
}

/** Exported deployment size per resource, and the serialized provider one resource carries. */
async function stateFigures(
  stack: Stack,
  resources: number,
): Promise<{ bytesPerResource: number; providerChars: number; deployment: object }> {
  const deployment = (await stack.exportStack()).deployment as {
    resources?: { type: string; outputs?: Record<string, unknown> }[];
  };
  const bytes = Buffer.byteLength(JSON.stringify(deployment));
  const dynamic = deployment.resources?.find((resource) => typeof resource.outputs?.__provider === "string");
  return {
    bytesPerResource: Math.round(bytes / resources),
    providerChars: String(dynamic?.outputs?.__provider ?? "").length,
    deployment,
  };
}

/** `pulumi-proxy provider install` into a stack's own plugin cache, as a user runs it. */
function installPlugin(pulumiHome: string): void {
  execFileSync(process.execPath, [path.join(REPO_ROOT, "dist", "cli", "main.js"), "provider", "install"], {
    env: { ...process.env, PULUMI_HOME: pulumiHome },
    stdio: "ignore",
  });
}

/** A twin with a provider that makes no request: up, refresh and destroy, timed. */
async function twinRun(
  binDir: string,
  program: PulumiFn,
  shape: StackShape,
  parallel: Parallel,
  env: Record<string, string>,
) {
  const harness = await createBenchStack(binDir, program, {}, env);
  try {
    const memory = new ProviderMemory();
    memory.start();
    const up = await timed(() => harness.stack.up({ parallel: parallel.writes }));
    const providerMb = memory.stop();
    const refresh = await timed(() => harness.stack.refresh({ parallel: parallel.refresh }));
    const state = await stateFigures(harness.stack, resourceCount(shape));
    const destroy = await timed(() => harness.stack.destroy({ parallel: parallel.writes }));
    return { floor: { up: up.seconds, refresh: refresh.seconds, destroy: destroy.seconds }, state, providerMb };
  } finally {
    await harness.cleanup();
  }
}

/** One run of the real stack: up, preview, refresh and destroy, each measured against a fresh window. */
async function realRun(
  binDir: string,
  installed: Installed,
  shape: StackShape,
  parallel: Parallel,
  crowd: number,
  env: Record<string, string>,
  native: boolean,
) {
  const resources = resourceCount(shape);
  const clock = new WindowClock();
  const span = new RequestSpan();
  const server = await startReferenceServer({
    rateLimitPerMinute: RATE_LIMIT_PER_MINUTE,
    clock,
    balanceCents: 100_000_000,
    log: span.seen,
  });
  const harness = await createBenchStack(
    binDir,
    realProgram(installed, shape, native),
    {
      "proxy:apiUrl": { value: server.url },
      "proxy:apiKey": { value: server.rootKey, secret: true },
    },
    env,
  );
  try {
    const { stack } = harness;
    if (native) installPlugin(harness.envVars.PULUMI_HOME ?? "");
    const context = { server, clock, span, crowd };
    const up = await phase(context, async () => {
      const result = await stack.up({ parallel: parallel.writes });
      if (result.summary.resourceChanges?.create !== resources + 1)
        throw new Error(`up created ${JSON.stringify(result.summary.resourceChanges)}`);
    });
    log(`up       ${describe(up)}`);

    server.resetStats();
    const preview = await stack.preview({ parallel: parallel.writes });
    if (preview.changeSummary.same !== resources + 1)
      throw new Error(`preview planned ${JSON.stringify(preview.changeSummary)}`);
    const previewRequests = server.stats().requests;
    log(`preview  ${previewRequests} requests`);

    const refresh = await phase(context, async () => {
      const result = await stack.refresh({ parallel: parallel.refresh });
      const changes = result.summary.resourceChanges ?? {};
      if (Object.keys(changes).some((kind) => kind !== "same"))
        throw new Error(`refresh found drift: ${JSON.stringify(changes)}`);
    });
    log(`refresh  ${describe(refresh)}`);

    const state = await stateFigures(stack, resources);
    const destroy = await phase(context, () => stack.destroy({ parallel: parallel.writes }));
    const left = server.control.snapshot();
    if (left.proxyUsers.length + left.ips.length + left.keys.length !== 1)
      throw new Error("destroy left objects behind");
    log(`destroy  ${describe(destroy)}`);
    return { up, previewRequests, refresh, destroy, state };
  } finally {
    await harness.cleanup();
    await server.close();
  }
}

type Phase = "up" | "refresh" | "destroy";
const quicker = (a: Measured, b: Measured) => (b.seconds < a.seconds ? b : a);

/**
 * The stack, its no-op twin and its same-state twin, `rounds` times, the order reversed each round,
 * and for each phase the quickest of each. Two runs of the same stack minutes apart differ by up to
 * half on this machine (the engine's checkpoints dominate and their cost wanders), so one run of each
 * would mostly measure that noise; best-of on every side treats them alike.
 */
export async function benchStack(
  binDir: string,
  installed: Installed,
  shape: StackShape,
  parallel: Parallel,
  { crowd = 0, env = {}, rounds = 2, native = false }: StackOptions = {},
): Promise<StackFigures> {
  const resources = resourceCount(shape);
  const envNote =
    Object.keys(env).length > 0
      ? `, ${Object.entries(env)
          .map(([k, v]) => `${k}=${v}`)
          .join(" ")}`
      : "";
  const crowded = crowd > 0 ? `, another client spends ${crowd * 100} % of each phase's window first` : "";
  log(
    `${shape.label}: ${resources} resources, parallel ${describeParallel(parallel)}${crowded}${envNote}, best of ${rounds}`,
  );
  type TwinRun = Awaited<ReturnType<typeof twinRun>>;
  const floors: TwinRun[] = [];
  const sameStates: TwinRun[] = [];
  const reals: Awaited<ReturnType<typeof realRun>>[] = [];
  let recorded: Recorded | undefined;
  const logTwin = (label: string, run: TwinRun) =>
    log(
      `${label}: up ${run.floor.up.toFixed(1)} s, refresh ${run.floor.refresh.toFixed(1)} s, destroy ${run.floor.destroy.toFixed(1)} s, provider ${run.providerMb} MiB`,
    );
  const runFloor = async () => {
    floors.push(await twinRun(binDir, noopProgram(installed, shape), shape, parallel, env));
    logTwin("engine floor (no-op provider)", floors.at(-1)!);
  };
  const runSameState = async () => {
    if (!recorded) throw new Error("the same-state twin needs a real run first");
    sameStates.push(await twinRun(binDir, replayProgram(installed, shape, recorded), shape, parallel, env));
    logTwin("same-state floor (replayed state, no requests)", sameStates.at(-1)!);
  };
  const runReal = async () => {
    const run = await realRun(binDir, installed, shape, parallel, crowd, env, native);
    recorded ??= installed.recordForReplay(run.state.deployment);
    reals.push(run);
  };
  // The same-state twin replays the first real run, so it never goes before one.
  for (let round = 0; round < Math.max(1, rounds); round++) {
    const order = round % 2 === 0 ? [runFloor, runReal, runSameState] : [runSameState, runReal, runFloor];
    for (const run of order) await run();
  }
  const noop = floors[0]!;
  const real = reals[0]!;
  const fastestOf = (runs: TwinRun[]): PhaseSeconds => {
    const min = (phase: Phase) => Math.min(...runs.map((run) => run.floor[phase]));
    return { up: min("up"), refresh: min("refresh"), destroy: min("destroy") };
  };
  const fastest = (phase: Phase) => reals.map((run) => run[phase]).reduce(quicker);
  return {
    shape,
    resources,
    parallel,
    engineFloor: fastestOf(floors),
    sameStateFloor: fastestOf(sameStates),
    crowd,
    env,
    up: fastest("up"),
    previewRequests: real.previewRequests,
    refresh: fastest("refresh"),
    destroy: fastest("destroy"),
    state: {
      bytesPerResource: real.state.bytesPerResource,
      providerChars: real.state.providerChars,
      noopBytesPerResource: noop.state.bytesPerResource,
      noopProviderChars: noop.state.providerChars,
    },
    noopProviderMb: noop.providerMb,
  };
}
