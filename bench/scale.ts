import { execFileSync } from "node:child_process";
import path from "node:path";
import { startReferenceServer } from "../server";
import { WINDOW_MS, windowFloorSeconds } from "./floors";
import { createBenchStack, ProviderMemory, REPO_ROOT, timed, WindowClock } from "./harness";
import type { Installed } from "./install";
import { type Measured, phase, RATE_LIMIT_PER_MINUTE, RequestSpan } from "./phase";
import { realProgram } from "./programs";

/**
 * `npm run bench -- --only scale`: one native stack of N proxy users against the real limit of 600
 * requests a minute, with the engine's checkpoints and with `PULUMI_SKIP_CHECKPOINTS=true`: up,
 * preview, refresh and destroy, each against the window floor (60 s × (⌈R / 600⌉ − 1) from the phase's
 * first request), with the engine's and the plugin's peak memory and the state's size. A run with
 * checkpoints that would take well over 30 minutes on this shared machine is not run: it is
 * extrapolated from the N=1,000 run's own timeline (see `extrapolate`).
 */

export type CheckpointMode = "skip" | "default";

export interface ScalePhase {
  seconds: number;
  /** Seconds from the phase's start to its first request: the engine's start and the program's registrations. */
  firstRequest: number;
  requests: number;
  rateLimited: number;
  /** The first request's time plus 60 s × (⌈requests / 600⌉ − 1): no phase can end sooner. */
  windowFloor: number;
  engineMb: number;
  pluginMb: number;
}

export interface ScaleFigures {
  n: number;
  mode: CheckpointMode;
  up: ScalePhase;
  preview: { seconds: number; requests: number };
  refresh: ScalePhase;
  destroy: ScalePhase;
  stateBytes: number;
  /** Seconds after the phase's start at which the k-th POST (up) and DELETE (destroy) reached the server. */
  timeline: { up: number[]; destroy: number[] };
}

const engineMemory = () => new ProviderMemory((cmdline) => path.basename(cmdline.split(" ")[0] ?? "") === "pulumi");
// The plugin `pulumi-proxy provider install` puts in the plugin cache starts the package's native/main.js.
const pluginMemory = () =>
  new ProviderMemory((cmdline) => cmdline.includes("pulumi-resource-proxy") || cmdline.includes("native/main.js"));

function log(message: string): void {
  process.stdout.write(`  ${message}\n`);
}

export async function benchScale(
  binDir: string,
  installed: Installed,
  n: number,
  mode: CheckpointMode,
): Promise<ScaleFigures> {
  const clock = new WindowClock();
  const span = new RequestSpan();
  let phaseStart = performance.now();
  const writes: { up: number[]; destroy: number[] } = { up: [], destroy: [] };
  let recording: number[] | undefined;
  const server = await startReferenceServer({
    rateLimitPerMinute: RATE_LIMIT_PER_MINUTE,
    clock,
    balanceCents: 100_000_000,
    log: (line) => {
      span.seen();
      const method = line.split(" ")[1];
      if (recording && (method === "POST" || method === "DELETE"))
        recording.push((performance.now() - phaseStart) / 1000);
    },
  });
  const env: Record<string, string> = mode === "skip" ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {};
  const shape = { label: `N=${n}`, users: n, keys: 0, ips: 0 };
  const harness = await createBenchStack(
    binDir,
    realProgram(installed, shape, true),
    { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
    env,
  );
  const context = { server, clock, span, crowd: 0 };
  const measured = async (into: number[] | undefined, work: () => Promise<unknown>): Promise<ScalePhase> => {
    const engine = engineMemory();
    const plugin = pluginMemory();
    engine.start();
    plugin.start();
    recording = into;
    phaseStart = performance.now();
    let m: Measured;
    try {
      m = await phase(context, work);
    } finally {
      recording = undefined;
    }
    return {
      seconds: m.seconds,
      firstRequest: m.firstRequest,
      requests: m.requests,
      rateLimited: m.rateLimited,
      windowFloor:
        m.firstRequest +
        windowFloorSeconds(m.requests, {
          limit: RATE_LIMIT_PER_MINUTE,
          left: RATE_LIMIT_PER_MINUTE,
          windowLeftMs: WINDOW_MS,
        }),
      engineMb: engine.stop(),
      pluginMb: plugin.stop(),
    };
  };
  try {
    const { stack } = harness;
    execFileSync(process.execPath, [path.join(REPO_ROOT, "dist", "cli", "main.js"), "provider", "install"], {
      env: { ...process.env, PULUMI_HOME: harness.envVars.PULUMI_HOME ?? "" },
      stdio: "ignore",
    });
    const up = await measured(writes.up, async () => {
      const result = await stack.up();
      if (result.summary.resourceChanges?.create !== n + 1)
        throw new Error(`up created ${JSON.stringify(result.summary.resourceChanges)}`);
    });
    log(`N=${n} ${mode}: up ${describe(up)}`);
    server.resetStats();
    const previewRun = await timed(() => stack.preview());
    const preview = { seconds: previewRun.seconds, requests: server.stats().requests };
    log(`N=${n} ${mode}: preview ${preview.seconds.toFixed(1)} s, ${preview.requests} requests`);
    const refresh = await measured(undefined, () => stack.refresh());
    log(`N=${n} ${mode}: refresh ${describe(refresh)}`);
    const stateBytes = Buffer.byteLength(JSON.stringify((await stack.exportStack()).deployment));
    const destroy = await measured(writes.destroy, () => stack.destroy());
    log(`N=${n} ${mode}: destroy ${describe(destroy)}; state ${(stateBytes / 1e6).toFixed(2)} MB`);
    return { n, mode, up, preview, refresh, destroy, stateBytes, timeline: writes };
  } finally {
    await harness.cleanup();
    await server.close();
  }
}

function describe(p: ScalePhase): string {
  const ratio = p.windowFloor > 0 ? ` (${(p.seconds / p.windowFloor).toFixed(2)} ×)` : "";
  return (
    `${p.seconds.toFixed(1)} s, first request at ${p.firstRequest.toFixed(1)} s, window floor ${p.windowFloor.toFixed(0)} s${ratio}, ` +
    `${p.requests} requests, ${p.rateLimited} 429s, engine ${p.engineMb} MiB, plugin ${p.pluginMb} MiB`
  );
}

/**
 * With checkpoints the engine rewrites the whole state after each step, so the k-th step costs
 * α + β·k (up: k resources stored) or α + β·(N − k) (destroy): the time to the k-th write is
 * α·k + β·k²/2, or α·k + β·(N·k − k²/2). α and β are fitted (least squares) to a measured run's
 * timeline and the phase's time at N is that curve, or the window floor where that is later.
 */
export function extrapolate(run: ScaleFigures, n: number): { up: number; destroy: number } {
  const leastSquares = (times: number[], feature: (k: number) => number): [number, number] => {
    let [sxx, sxy, syy, sxt, syt] = [0, 0, 0, 0, 0];
    times.forEach((t, index) => {
      const k = index + 1;
      const y = feature(k);
      sxx += k * k;
      sxy += k * y;
      syy += y * y;
      sxt += k * t;
      syt += y * t;
    });
    const det = sxx * syy - sxy * sxy;
    return [(sxt * syy - syt * sxy) / det, (syt * sxx - sxt * sxy) / det];
  };
  const m = run.n;
  const [ua, ub] = leastSquares(run.timeline.up, (k) => (k * k) / 2);
  const [da, db] = leastSquares(run.timeline.destroy, (k) => m * k - (k * k) / 2);
  const floor = 60 * (Math.ceil(n / RATE_LIMIT_PER_MINUTE) - 1);
  return {
    up: Math.max(run.up.firstRequest + ua * n + (ub * n * n) / 2, floor),
    destroy: Math.max(run.destroy.firstRequest + da * n + (db * n * n) / 2, floor),
  };
}

export function scaleTable(rows: ScaleFigures[]): string {
  const lines = [
    "| N | checkpoints | phase | s | first request s | window floor s (resets) | ratio | requests | 429s | engine peak MiB | plugin peak MiB |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    for (const [name, p] of [
      ["up", r.up],
      ["refresh", r.refresh],
      ["destroy", r.destroy],
    ] as const) {
      const resets = Math.max(0, Math.ceil(p.requests / RATE_LIMIT_PER_MINUTE) - 1);
      const ratio = p.windowFloor > 0 ? (p.seconds / p.windowFloor).toFixed(2) : "—";
      lines.push(
        `| ${r.n} | ${r.mode} | ${name} | ${p.seconds.toFixed(1)} | ${p.firstRequest.toFixed(1)} | ${p.windowFloor.toFixed(0)} (${resets}) | ${ratio} | ${p.requests} | ${p.rateLimited} | ${p.engineMb} | ${p.pluginMb} |`,
      );
    }
    lines.push(
      `| ${r.n} | ${r.mode} | preview | ${r.preview.seconds.toFixed(1)} | | | | ${r.preview.requests} | | | |`,
      `| ${r.n} | ${r.mode} | state | ${(r.stateBytes / 1e6).toFixed(2)} MB | | | | | | | |`,
    );
  }
  return lines.join("\n");
}
