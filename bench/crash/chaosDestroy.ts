import { CliStack, tail } from "../../harness/crash/cliStack";
import { phases } from "../../harness/crash/scenario";
import { startReferenceServer } from "../../server";

/**
 * A destroy under 20 % faults must converge in one run: every delete retries (by time, not count)
 * through errors before the change and replies lost after it, and the account ends empty.
 */

export const CHAOS_SHAPE = { users: 150, keys: 50, ips: 50 };
/** 10 % 500/503 before any change, 5 % dropped connections, and 7 % of the writes left commit and lose their reply: about 20 % of writes fail. */
export const CHAOS_FAULTS = { errorRate: 0.1, dropRate: 0.05, afterCommitRate: 0.07, seed: 20 };

export interface ChaosFigures {
  resources: number;
  exitCode: number | null;
  seconds: number;
  requests: number;
  faults: number;
  faultShare: number;
  /** The most faults one request path met in a row. */
  longestStreak: number;
  leftOver: number;
}

export async function benchChaosDestroy(binDir: string, parentDir: string): Promise<ChaosFigures> {
  const streaks = new Map<string, number>();
  let longestStreak = 0;
  const server = await startReferenceServer({
    rateLimitPerMinute: 600,
    balanceCents: 10_000_000,
    // One line per request: "<request id> <method> <path> <outcome> <ms> <key id>".
    log: (line) => {
      const [, method, path, outcome] = line.split(" ");
      const where = `${method} ${path}`;
      const failed = outcome === "500" || outcome === "503" || outcome === "reset";
      const streak = failed ? (streaks.get(where) ?? 0) + 1 : 0;
      streaks.set(where, streak);
      longestStreak = Math.max(longestStreak, streak);
    },
  });
  const stack = await CliStack.create({ binDir, parentDir, apiUrl: server.url, apiKey: server.rootKey });
  try {
    const create = phases(CHAOS_SHAPE)[0];
    if (create?.spec) stack.setSpec(create.spec);
    const up = await stack.up("--parallel", "64");
    if (up.code !== 0) throw new Error(`the chaos stack's up failed:\n${tail(up)}`);
    server.setFaults(CHAOS_FAULTS);
    server.resetStats();
    streaks.clear();
    longestStreak = 0;
    const started = performance.now();
    const destroy = await stack.run([
      "destroy",
      "--yes",
      "--skip-preview",
      "--parallel",
      "64",
      "--stack",
      stack.stackName,
    ]);
    const seconds = (performance.now() - started) / 1000;
    server.setFaults({});
    const stats = server.stats();
    const faults = ["500", "503", "reset"].reduce((sum, kind) => sum + (stats.byStatus[kind] ?? 0), 0);
    const left = server.control.snapshot();
    if (destroy.code !== 0) process.stdout.write(`${tail(destroy)}\n`);
    return {
      resources: CHAOS_SHAPE.users + CHAOS_SHAPE.keys + CHAOS_SHAPE.ips,
      exitCode: destroy.code,
      seconds,
      requests: stats.requests,
      faults,
      faultShare: faults / Math.max(1, stats.requests),
      longestStreak,
      leftOver: left.proxyUsers.length + left.ips.length + left.keys.length - 1,
    };
  } finally {
    await stack.cleanup();
    await server.close();
  }
}

export function chaosTable(f: ChaosFigures): string {
  return [
    "| resources | destroy exit | seconds | requests | faults (share) | longest fault streak on one path | objects left |",
    "|---|---|---|---|---|---|---|",
    `| ${f.resources} | ${f.exitCode} | ${f.seconds.toFixed(1)} | ${f.requests} | ${f.faults} (${(f.faultShare * 100).toFixed(1)} %) | ${f.longestStreak} | ${f.leftOver} |`,
  ].join("\n");
}
