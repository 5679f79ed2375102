import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { RecoverReport } from "../../cli/recover/steps";
import type { ReferenceServer } from "../../server";
import { auditCrash, type CrashAudit, type Intent } from "./audit";
import type { CliResult, CliStack, Deployment } from "./cliStack";
import type { MixedShape, Phase } from "./scenario";

/**
 * One kill and its recovery, as the crash bench and the suite's crash tests run them: the phase is
 * started with the CLI, killed (SIGKILL to the CLI and all its children) once a drawn number of its
 * writes has reached the server, recovered with `pulumi-proxy recover` alone, and audited.
 */

export interface KillRow {
  kill: number;
  phase: string;
  point: string;
  /** Objects the server held that the state did not know, right after the kill. */
  unheardAtKill: number | "state unreadable";
  recovery: string;
  audit: CrashAudit;
}

/** A seeded generator, so a run's kill points can be replayed. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WRITE = /^(POST|PATCH|DELETE) /;

function writesSeen(server: ReferenceServer): number {
  return Object.entries(server.stats().byRoute)
    .filter(([route]) => WRITE.test(route))
    .reduce((sum, [, count]) => sum + count, 0);
}

function phaseArgs(stack: CliStack, phase: Phase): string[] {
  const verb = phase.name === "destroy" ? "destroy" : "up";
  return [verb, "--yes", "--skip-preview", "--stack", stack.stackName];
}

/** Requests the server has seen in this phase, by `METHOD /route`. */
export type Seen = Record<string, number>;

/** Starts the phase and kills it once `due` says so (by default at the `point`-th write). */
async function killAt(
  server: ReferenceServer,
  stack: CliStack,
  phase: Phase,
  point: number,
  due: (seen: Seen) => boolean = () => writesSeen(server) >= point,
): Promise<CliResult> {
  if (phase.spec) stack.setSpec(phase.spec);
  server.resetStats();
  const run = stack.start(phaseArgs(stack, phase));
  let finished = false;
  void run.exited.then(() => {
    finished = true;
  });
  while (!finished && !due(server.stats().byRoute)) await new Promise((resolve) => setTimeout(resolve, 2));
  return run.kill();
}

/** The built command: beside this file once built (dist/harness/crash), or in dist/ when a test runs the source. */
const CLI = [
  path.join(__dirname, "..", "..", "cli", "main.js"),
  path.join(__dirname, "..", "..", "dist", "cli", "main.js"),
].find((file) => fs.existsSync(file)) as string;

/**
 * What the README tells a user to run after a killed run: `pulumi-proxy recover`, naming the killed
 * command as the deploy workflow does. Returns the steps it took, or why it could not recover.
 */
async function recover(stack: CliStack, phase: Phase): Promise<string> {
  const verb = phase.name === "destroy" ? "destroy" : "up";
  const args = [CLI, "recover", "--stack", stack.stackName, "--cwd", stack.dir, `--${verb}`, "--json"];
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { env: { ...process.env, ...stack.env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") reject(error);
        else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
  const report = JSON.parse(result.stdout) as RecoverReport;
  if (!report.recovered) return `recover exited ${result.code}: ${report.error?.replace(/\s+/g, " ")}`;
  return `${report.steps.map((step) => step.action).join(", ")}: ok`;
}

/** The state right after a kill, if the backend can load it: a kill while it saves can leave it unreadable (see recover). */
async function stateAtKill(stack: CliStack): Promise<Deployment | undefined> {
  try {
    return await stack.exportState();
  } catch (error) {
    if (!String(error).includes("failed to load checkpoint")) throw error;
    return undefined;
  }
}

/** What the stack means to have done once the phase is over. */
export function advance(intent: Intent, phase: Phase, shape: MixedShape): void {
  if (phase.name === "create") intent.allocations += shape.ips;
  if (phase.name === "replace")
    for (let i = 0; i < shape.ips; i++) intent.replacements.set(`ip-${String(i).padStart(2, "0")}`, 1);
  if (phase.name === "destroy") intent.replacements.clear();
}

export interface KillOptions {
  /** Runs between the kill and the recovery: a test moves the server's clock past the API's 24 hours here. */
  beforeRecover?: () => void;
  /** Said in the row's recovery column with what was done before it. */
  note?: string;
  /** When to kill, instead of at the `point`-th write: once the requests seen so far satisfy it. */
  killWhen?: (seen: Seen) => boolean;
}

export async function killAndRecover(
  server: ReferenceServer,
  stack: CliStack,
  phase: Phase,
  point: number,
  intent: Intent,
  shape: MixedShape,
  options: KillOptions = {},
): Promise<Omit<KillRow, "kill">> {
  const killed = await killAt(server, stack, phase, point, options.killWhen);
  const state = await stateAtKill(stack);
  const atKill = state ? await auditCrash(server, state, intent) : undefined;
  options.beforeRecover?.();
  const recovery = await recover(stack, phase);
  advance(intent, phase, shape);
  const audit = await auditCrash(server, await stack.exportState(), intent);
  return {
    phase: phase.name,
    point: `${killed.signal === "SIGKILL" ? "" : "finished before "}${options.killWhen ? "the chosen request" : `write ${point}/${phase.writes}`}`,
    unheardAtKill: atKill ? atKill.orphans.length : "state unreadable",
    recovery: options.note ? `${options.note}; ${recovery}` : recovery,
    audit,
  };
}
