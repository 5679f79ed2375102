import fs from "node:fs";
import path from "node:path";
import type { PulumiFn } from "@pulumi/pulumi/automation";
import { descendantsOf } from "../harness/crash/processTree";
import { type LocalStack, loadRepositoryTools, openLocalStack } from "../harness/localStack";
import type { Clock } from "../server";

/**
 * What the stack benchmarks need around the Automation API: the pinned CLI, isolated stacks, a
 * server clock whose rate-limit window opens with each measured phase, and the peak memory of the
 * dynamic-provider process.
 */

export const REPO_ROOT = path.resolve(__dirname, "..", "..");
/**
 * Kept apart from the tests' `.pulumi-proxy/stacks`: see install.ts. `PULUMI_PROXY_BENCH_DIR` names
 * another folder beside it, so that two bench runs at once do not reinstall each other's package.
 */
export const BENCH_ROOT = path.join(REPO_ROOT, ".pulumi-proxy", process.env.PULUMI_PROXY_BENCH_DIR ?? "bench");
export const STACKS_DIR = path.join(BENCH_ROOT, "stacks");

/** Provisions (or finds) the pinned CLI; its folder must come first on PATH for every run. */
export async function pulumiBinDir(): Promise<string> {
  const { provisionPulumi } = await loadRepositoryTools(REPO_ROOT);
  return (await provisionPulumi()).binDir;
}

/**
 * An inline-program stack with its own Pulumi home and file backend (harness/localStack.ts). Its work
 * folder sits below the bench's node_modules, so the dynamic-provider process resolves
 * `pulumi-proxy` there, as a user's does.
 */
export function createBenchStack(
  binDir: string,
  program: PulumiFn,
  config: Record<string, { value: string; secret?: boolean }> = {},
  extraEnv: Record<string, string> = {},
): Promise<LocalStack> {
  return openLocalStack({ binDir, label: "bench", program, programsDir: STACKS_DIR, config, envVars: extraEnv });
}

/**
 * The server's clock, which only ever moves forward. The service's windows are fixed minutes, so
 * where in a minute a phase starts changes how much budget it finds; after `openWindowOnNextRequest`
 * the next request the server handles lands at the first millisecond of a fresh window. Each phase
 * then meets the steady limit of 600 a minute (the N/10 s floor), never leftovers of an earlier phase.
 */
export class WindowClock implements Clock {
  #offset = 0;
  #armed = false;

  now(): number {
    const now = Date.now() + this.#offset;
    if (!this.#armed) return now;
    this.#armed = false;
    this.#offset += 60_000 - (now % 60_000);
    return Date.now() + this.#offset;
  }

  openWindowOnNextRequest(): void {
    this.#armed = true;
  }
}

/** A process below this one whose command line (arguments joined by spaces) `matches`: by default the dynamic-provider process. */
export type ProcessMatch = (cmdline: string) => boolean;

/** Peak resident memory (VmHWM) of the processes below this one that match (dynamic-provider processes by default). */
export class ProviderMemory {
  #peakKb = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly matches: ProcessMatch = (cmdline) => cmdline.includes("cmd/dynamic-provider")) {}

  start(): void {
    this.#peakKb = 0;
    this.#timer = setInterval(() => this.#sample(), 200);
  }

  /** Peak in MiB since `start`; 0 if no matching process was seen. */
  stop(): number {
    this.#sample();
    clearInterval(this.#timer);
    return Math.round(this.#peakKb / 1024);
  }

  #sample(): void {
    for (const pid of descendantsOf(process.pid)) {
      if (!this.matches(readProc(pid, "cmdline").replace(/\0/g, " "))) continue;
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readProc(pid, "status"))?.[1];
      if (hwm) this.#peakKb = Math.max(this.#peakKb, Number(hwm));
    }
  }
}

function readProc(pid: number, file: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return "";
  }
}

/** Seconds of wall time of `work`, with its result. */
export async function timed<T>(work: () => Promise<T>): Promise<{ seconds: number; result: T }> {
  const started = performance.now();
  const result = await work();
  return { seconds: (performance.now() - started) / 1000, result };
}
