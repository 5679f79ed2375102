import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { packageVersion } from "../provider/native/version";
import { startReferenceServer } from "../server";
import { type CpuSeconds, CpuSplit } from "./cpuSplit";
import { createBenchStack, REPO_ROOT, timed, WindowClock } from "./harness";
import type { Installed } from "./install";
import { RATE_LIMIT_PER_MINUTE } from "./phase";
import { realProgram } from "./programs";
import { loadAverage } from "./report";

/**
 * `npm run bench -- --only preview`: `pulumi preview` of one up-to-date native stack of N proxy users
 * (what every pull request's plan pays), beside its floor, in the same run: the same stack, the same
 * state and the same program, with the plugin in the stack's plugin cache swapped for one of the same
 * name and schema that answers `check` and `diff` at once (noopPlugin.ts). The two alternate, each
 * `rounds` times, and each side reports its quickest. Each run's CPU is split by process: the engine,
 * the plugin, and the program (this process: the inline program and the idle reference server).
 *
 * Set-up (not measured): a real `up` through the real plugin against the reference server with its
 * limit lifted and PULUMI_SKIP_CHECKPOINTS=true, so that 10,000 creates take a minute, not 17 window
 * resets. The previews then run at the real limit of 600 a minute and with the CLI's defaults.
 */

export interface PreviewRun {
  seconds: number;
  cpu: CpuSeconds;
  /** The 1-minute load average as the run started and as it ended. */
  load: [number, number];
  requests: number;
  rateLimited: number;
}

export interface PreviewFigures {
  n: number;
  setupSeconds: number;
  real: PreviewRun[];
  floor: PreviewRun[];
  loadBefore: string;
  loadAfter: string;
}

function log(message: string): void {
  process.stdout.write(`  ${message}\n`);
}

const SETUP_LIMIT_PER_MINUTE = 100_000;

/** The floor's launcher: the engine starts it as it starts the real one, by the same name. */
function floorLauncher(): string {
  const script = path.join(REPO_ROOT, "dist", "bench", "noopPlugin.js");
  return `#!/bin/sh\nexec '${process.execPath}' '${script}' "$@"\n`;
}

export async function benchPreview(
  binDir: string,
  installed: Installed,
  n: number,
  rounds = 3,
): Promise<PreviewFigures> {
  const loadBefore = loadAverage();
  const clock = new WindowClock();
  const server = await startReferenceServer({
    rateLimitPerMinute: SETUP_LIMIT_PER_MINUTE,
    clock,
    balanceCents: 100_000_000,
  });
  const shape = { label: `N=${n}`, users: n, keys: 0, ips: 0 };
  const harness = await createBenchStack(
    binDir,
    realProgram(installed, shape, true),
    { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
    { PULUMI_SKIP_CHECKPOINTS: "true" },
  );
  try {
    const { stack } = harness;
    const pulumiHome = harness.envVars.PULUMI_HOME ?? "";
    execFileSync(process.execPath, [path.join(REPO_ROOT, "dist", "cli", "main.js"), "provider", "install"], {
      env: { ...process.env, PULUMI_HOME: pulumiHome },
      stdio: "ignore",
    });
    const executable = path.join(pulumiHome, "plugins", `resource-proxy-v${packageVersion()}`, "pulumi-resource-proxy");
    const launchers = { real: fs.readFileSync(executable, "utf8"), floor: floorLauncher() };

    const setup = await timed(async () => {
      const result = await stack.up();
      if (result.summary.resourceChanges?.create !== n + 1)
        throw new Error(`set-up up created ${JSON.stringify(result.summary.resourceChanges)}`);
    });
    log(
      `N=${n}: set-up up ${setup.seconds.toFixed(1)} s (limit lifted, no checkpoints; not measured), ${loadAverage()}`,
    );
    delete stack.workspace.envVars.PULUMI_SKIP_CHECKPOINTS;
    server.setRateLimit(RATE_LIMIT_PER_MINUTE);

    const runs: Record<"real" | "floor", PreviewRun[]> = { real: [], floor: [] };
    const measure = async (side: "real" | "floor") => {
      fs.writeFileSync(executable, launchers[side], { mode: 0o755 });
      // The plugin's one request (its first check asks whether the credentials work) meets a fresh
      // window, never the one the set-up spent at the lifted limit, where it would wait for the reset.
      clock.openWindowOnNextRequest();
      server.resetStats();
      const split = new CpuSplit();
      const loadAtStart = os.loadavg()[0] ?? 0;
      split.start();
      const { seconds, result } = await timed(() => stack.preview());
      const cpu = split.stop();
      if (result.changeSummary.same !== n + 1 || Object.keys(result.changeSummary).length !== 1)
        throw new Error(`${side} preview planned ${JSON.stringify(result.changeSummary)}`);
      const { requests, rateLimited } = server.stats();
      const run: PreviewRun = { seconds, cpu, load: [loadAtStart, os.loadavg()[0] ?? 0], requests, rateLimited };
      runs[side].push(run);
      log(
        `N=${n} ${side.padEnd(5)} preview ${seconds.toFixed(1)} s, ${requests} requests, ${rateLimited} 429s, ${describeCpu(cpu)}, load ${describeLoad(run)}`,
      );
    };
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? (["floor", "real"] as const) : (["real", "floor"] as const))
        await measure(side);
    }
    return {
      n,
      setupSeconds: setup.seconds,
      ...runs,
      loadBefore,
      loadAfter: loadAverage(),
    };
  } finally {
    await harness.cleanup();
    await server.close();
  }
}

function describeCpu(cpu: CpuSeconds): string {
  const s = (value: number) => value.toFixed(1);
  return `CPU s: engine ${s(cpu.engine)}, plugin ${s(cpu.plugin)}, program ${s(cpu.program)}, other ${s(cpu.other)}`;
}

const describeLoad = (run: PreviewRun) => `${run.load[0].toFixed(1)}→${run.load[1].toFixed(1)}`;
const quickest = (runs: PreviewRun[]) => runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
const totalCpu = (run: PreviewRun) => run.cpu.engine + run.cpu.plugin + run.cpu.program + run.cpu.other;
const sum = (runs: PreviewRun[], key: "requests" | "rateLimited") => runs.reduce((total, run) => total + run[key], 0);
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * One row per side and N. The wall-time ratio compares the quickest runs; on a machine others load it
 * moves with their load (see each run's). The CPU ratio compares the mean CPU seconds of all three
 * processes together, which another process's load barely moves: it says what the real plugin's
 * work adds whatever the machine is doing.
 */
export function previewTable(rows: PreviewFigures[]): string {
  const lines = [
    "| N | plugin | preview s (quickest) | every run s (1-min load at start→end) | engine CPU s | plugin CPU s | program CPU s | requests (429s), all runs | wall ratio real/floor | CPU ratio real/floor | s per 1,000 users |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const floorCpu = mean(r.floor.map(totalCpu));
    for (const [side, runs] of [
      ["floor", r.floor],
      ["real", r.real],
    ] as const) {
      const best = quickest(runs);
      const all = runs.map((run) => `${run.seconds.toFixed(1)} (${describeLoad(run)})`).join(", ");
      const part = (key: keyof CpuSeconds) => mean(runs.map((run) => run.cpu[key])).toFixed(1);
      const ratios =
        side === "real"
          ? `${(best.seconds / quickest(r.floor).seconds).toFixed(2)} | ${(mean(runs.map(totalCpu)) / floorCpu).toFixed(2)}`
          : " | ";
      lines.push(
        `| ${r.n} | ${side} | ${best.seconds.toFixed(1)} | ${all} | ${part("engine")} | ${part("plugin")} | ${part("program")} | ${sum(runs, "requests")} (${sum(runs, "rateLimited")}) | ${ratios} | ${((best.seconds * 1000) / r.n).toFixed(2)} |`,
      );
    }
  }
  return lines.join("\n");
}
