import fs from "node:fs";
import path from "node:path";
import { descendantsOf } from "../harness/crash/processTree";

/**
 * Where a stack operation's CPU goes, by process: the engine (the `pulumi` CLI), the provider plugin,
 * and this process, which runs the inline program (the Automation API's language runtime) and the
 * reference server (idle in a preview: it makes no request). Each process below this one is sampled
 * from /proc every 200 ms; one that exits between two samples loses at most that much, which the
 * engine's and the plugin's tens of seconds make small.
 */

export type Part = "engine" | "plugin" | "program" | "other";
export type CpuSeconds = Record<Part, number>;

/** The kernel's clock ticks a second (USER_HZ), 100 on Linux for every architecture node runs on. */
const TICKS_PER_SECOND = 100;

export function partOf(cmdline: string): Part {
  const [executable = ""] = cmdline.split(" ");
  if (path.basename(executable) === "pulumi") return "engine";
  // The real plugin runs as `node …/pulumi-resource-proxy.cjs`, the floor's as `node …/noopPlugin.js`.
  if (/pulumi-resource-proxy|noopPlugin\.js|native\/main\.js/.test(cmdline)) return "plugin";
  return "other";
}

function cpuTicks(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // utime and stime: the 14th and 15th fields, the 12th and 13th after the command's ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

function cmdlineOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

export class CpuSplit {
  #seen = new Map<number, { part: Part; first: number; last: number }>();
  #own = process.cpuUsage();
  #timer: NodeJS.Timeout | undefined;

  start(): void {
    this.#seen.clear();
    // Processes already running count from now; those that start later from zero.
    for (const pid of descendantsOf(process.pid)) {
      const ticks = cpuTicks(pid);
      if (ticks !== undefined) this.#seen.set(pid, { part: partOf(cmdlineOf(pid)), first: ticks, last: ticks });
    }
    this.#own = process.cpuUsage();
    this.#timer = setInterval(() => this.#sample(), 200);
  }

  stop(): CpuSeconds {
    this.#sample();
    clearInterval(this.#timer);
    const own = process.cpuUsage(this.#own);
    const split: CpuSeconds = { engine: 0, plugin: 0, program: (own.user + own.system) / 1e6, other: 0 };
    for (const { part, first, last } of this.#seen.values()) split[part] += (last - first) / TICKS_PER_SECOND;
    return split;
  }

  #sample(): void {
    for (const pid of descendantsOf(process.pid)) {
      const ticks = cpuTicks(pid);
      if (ticks === undefined) continue;
      const known = this.#seen.get(pid);
      if (!known) this.#seen.set(pid, { part: partOf(cmdlineOf(pid)), first: 0, last: ticks });
      else {
        known.last = ticks;
        // Right after a fork the command line is still the parent's: classified again until it is its own.
        if (known.part === "other") known.part = partOf(cmdlineOf(pid));
      }
    }
  }
}
