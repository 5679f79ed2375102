import fs from "node:fs";

/** One stack's line of the table `fleet up` and `fleet destroy` print. */
export interface FleetRow {
  key: string;
  outcome: string;
  changes: Record<string, number>;
}

/** The rows of a fleet run's table by stack, as a user reads them: key, result and the engine's counts. */
export function tableRows(output: string): Record<string, FleetRow> {
  return Object.fromEntries(
    output.split("\n").flatMap((line) => {
      const row = /^(\S+) +\d+ +(\S+) +(\S+) +[\d.]+ +(.+?)\s*$/.exec(line);
      if (!row) return [];
      const counts = row[4] === "no changes" ? [] : (row[4] ?? "").split(", ").map((count) => count.split(" "));
      const changes = Object.fromEntries(counts.map(([op, count]) => [op, Number(count)]));
      return [[row[1] as string, { key: row[2] as string, outcome: row[3] as string, changes }]];
    }),
  );
}

/** Processes whose working folder is `dir` or below it (Linux's /proc). */
export function processesIn(dir: string): string[] {
  return fs.readdirSync("/proc").flatMap((pid) => {
    if (!/^\d+$/.test(pid)) return [];
    try {
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      return cwd === dir || cwd.startsWith(`${dir}/`)
        ? [`${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")}`]
        : [];
    } catch {
      return [];
    }
  });
}
