import type { Intent } from "../../harness/crash/audit";
import { CliStack } from "../../harness/crash/cliStack";
import { type KillRow, killAndRecover, random } from "../../harness/crash/kill";
import { type MixedShape, phases } from "../../harness/crash/scenario";
import { startReferenceServer } from "../../server";

/**
 * `npm run bench -- --only crash`: a mixed stack killed (SIGKILL to the CLI and all its children) at
 * random points of create, update, rotate, replace and destroy, recovered each time with
 * `pulumi-proxy recover` alone, and audited against the server: orphans, duplicates, extra charges and
 * dead secrets, whose goal is 0. `crash:kills` runs with the engine's checkpoints, `crash:skip` a
 * stack of 2,000 with `PULUMI_SKIP_CHECKPOINTS=true`, where a killed run records nothing at all.
 * Then a destroy of a larger stack under 20 % faults, which must converge in one run.
 */

export const CRASH_SHAPE: MixedShape = { users: 8, keys: 6, ips: 4 };
/** 2,000 objects: 20 kills over four cycles of the five phases. */
export const SKIP_CHECKPOINTS_SHAPE: MixedShape = { users: 1700, keys: 200, ips: 100 };

export interface CrashOptions {
  seed?: number;
  cycles?: number;
  shape?: MixedShape;
  /** Requests a minute the server allows. */
  rateLimitPerMinute?: number;
  /** More environment for every run of the stack (PULUMI_SKIP_CHECKPOINTS). */
  env?: Record<string, string>;
}

function log(message: string): void {
  process.stdout.write(`  ${message}\n`);
}

export async function benchCrash(binDir: string, parentDir: string, options: CrashOptions = {}): Promise<KillRow[]> {
  const { seed = 20_251_122, cycles = 4, shape = CRASH_SHAPE, rateLimitPerMinute = 600 } = options;
  const server = await startReferenceServer({ rateLimitPerMinute, balanceCents: 100_000_000 });
  const stack = await CliStack.create({
    binDir,
    parentDir,
    apiUrl: server.url,
    apiKey: server.rootKey,
    ...(options.env ? { env: options.env } : {}),
  });
  const draw = random(seed);
  const intent: Intent = { allocations: 0, replacements: new Map() };
  const rows: KillRow[] = [];
  try {
    for (let cycle = 0; cycle < cycles; cycle++) {
      for (const phase of phases(shape)) {
        const point = 1 + Math.floor(draw() * phase.writes);
        const started = performance.now();
        const row: KillRow = {
          kill: rows.length + 1,
          ...(await killAndRecover(server, stack, phase, point, intent, shape)),
        };
        rows.push(row);
        const seconds = ((performance.now() - started) / 1000).toFixed(0);
        log(
          `kill ${row.kill} (${row.phase}, ${row.point}, ${seconds} s): ${JSON.stringify({ ...row.audit, recovery: row.recovery })}`,
        );
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
