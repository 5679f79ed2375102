import { execFile } from "node:child_process";
import path from "node:path";
import type { RecoverReport } from "../../cli/recover/steps";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { auditCrash, type CrashAudit, type Intent } from "./audit";
import { type CliResult, CliStack, type Deployment } from "./cliStack";
import { type MixedShape, type Phase, phases } from "./scenario";

/**
 * `npm run bench -- crash`: a mixed stack killed (SIGKILL to the CLI and all its children) at random
 * points of create, update, rotate, replace and destroy, recovered each time with `pulumi-proxy recover` alone, and
 * audited against the server: orphans, duplicates, extra charges and dead secrets, whose goal is 0.
 * Then a destroy of a larger stack under 20 % faults, which must converge in one run.
 */

export const CRASH_SHAPE: MixedShape = { users: 8, keys: 6, ips: 4 };
const CYCLES = 4;

export interface KillRow {
  kill: number;
  phase: string;
  point: string;
  /** Objects the server held that the state did not know, right after the kill. */
  unheardAtKill: number | "state unreadable";
  recovery: string;
  audit: CrashAudit;
}

function log(message: string): void {
  process.stdout.write(`  ${message}\n`);
}

/** A seeded generator, so a run's kill points can be replayed. */
function random(seed: number): () => number {
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

/** Starts the phase and kills it once the `point`-th write has reached the server. */
async function killAt(server: ReferenceServer, stack: CliStack, phase: Phase, point: number): Promise<CliResult> {
  if (phase.spec) stack.setSpec(phase.spec);
  server.resetStats();
  const run = stack.start(phaseArgs(stack, phase));
  let finished = false;
  void run.exited.then(() => {
    finished = true;
  });
  while (!finished && writesSeen(server) < point) await new Promise((resolve) => setTimeout(resolve, 2));
  return run.kill();
}

const CLI = path.join(__dirname, "..", "..", "cli", "main.js");

/**
 * What the README tells a user to run after a killed run: `pulumi-proxy recover`, naming the killed
 * command as the deploy workflow does. Returns the steps it took, or why it could not recover.
 */
async function recover(stack: CliStack, phase: Phase): Promise<string> {
  const verb = phase.name === "destroy" ? "destroy" : "up";
  const args = [CLI, "recover", "--stack", stack.stackName, "--cwd", stack.dir, `--${verb}`, "--json"];
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    execFile(process.execPath, args, { env: { ...process.env, ...stack.env } }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") reject(error);
      else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
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
    log("checkpoint unreadable after the kill");
    return undefined;
  }
}

function advance(intent: Intent, phase: Phase, shape: MixedShape): void {
  if (phase.name === "create") intent.allocations += shape.ips;
  if (phase.name === "replace")
    for (let i = 0; i < shape.ips; i++) intent.replacements.set(`ip-${String(i).padStart(2, "0")}`, 1);
  if (phase.name === "destroy") intent.replacements.clear();
}

export async function benchCrash(
  binDir: string,
  parentDir: string,
  { seed = 20_251_122, cycles = CYCLES }: { seed?: number; cycles?: number } = {},
): Promise<KillRow[]> {
  const server = await startReferenceServer({ rateLimitPerMinute: 600, balanceCents: 10_000_000 });
  const stack = await CliStack.create({ binDir, parentDir, apiUrl: server.url, apiKey: server.rootKey });
  const draw = random(seed);
  const intent: Intent = { allocations: 0, replacements: new Map() };
  const rows: KillRow[] = [];
  try {
    for (let cycle = 0; cycle < cycles; cycle++) {
      for (const phase of phases(CRASH_SHAPE)) {
        const point = 1 + Math.floor(draw() * phase.writes);
        const killed = await killAt(server, stack, phase, point);
        const state = await stateAtKill(stack);
        const atKill = state ? await auditCrash(server, state, intent) : undefined;
        const recovery = await recover(stack, phase);
        advance(intent, phase, CRASH_SHAPE);
        const audit = await auditCrash(server, await stack.exportState(), intent);
        const row: KillRow = {
          kill: rows.length + 1,
          phase: phase.name,
          point: `${killed.signal === "SIGKILL" ? "" : "finished before "}write ${point}/${phase.writes}`,
          unheardAtKill: atKill ? atKill.orphans.length : "state unreadable",
          recovery,
          audit,
        };
        rows.push(row);
        log(`kill ${row.kill} (${row.phase}, ${row.point}): ${JSON.stringify({ ...audit, recovery })}`);
      }
    }
    return rows;
  } finally {
    await stack.cleanup();
    await server.close();
  }
}

export function killTable(rows: KillRow[]): string {
  const lines = [
    "| kill | phase | killed at | unheard at kill | recovery | orphans | duplicates | dead ids | extra charges | dead secrets | pending ops |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const total = { orphans: 0, duplicates: 0, deadIds: 0, extraCharges: 0, deadSecrets: 0, pending: 0 };
  for (const r of rows) {
    const a = r.audit;
    total.orphans += a.orphans.length;
    total.duplicates += a.duplicates.length;
    total.deadIds += a.deadIds.length;
    total.extraCharges += a.extraCharges;
    total.deadSecrets += a.deadSecrets.length;
    total.pending += a.pendingOperations;
    lines.push(
      `| ${r.kill} | ${r.phase} | ${r.point} | ${r.unheardAtKill} | ${r.recovery} | ${a.orphans.length} | ${a.duplicates.length} | ${a.deadIds.length} | ${a.extraCharges} | ${a.deadSecrets.length} | ${a.pendingOperations} |`,
    );
  }
  lines.push(
    `| total | | | ${rows.reduce((sum, r) => sum + (typeof r.unheardAtKill === "number" ? r.unheardAtKill : 0), 0)} | ${rows.filter((r) => r.recovery.endsWith("ok")).length}/${rows.length} ok | ${total.orphans} | ${total.duplicates} | ${total.deadIds} | ${total.extraCharges} | ${total.deadSecrets} | ${total.pending} |`,
  );
  return lines.join("\n");
}
