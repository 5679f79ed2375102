import fs from "node:fs";

/**
 * What a cancelled CI job does to `pulumi up`: SIGKILL to the CLI and everything below it. The CLI
 * starts its plugins (language host, dynamic-provider host) in process groups of their own, so
 * killing the CLI's group alone would leave the provider running and finishing its HTTP calls. The
 * whole tree is stopped first (SIGSTOP, so nothing forks or sends meanwhile), then killed.
 */
export function killTree(rootPid: number): number[] {
  const stopped = new Set<number>();
  // Stopping is repeated until no new descendant appears: a process may fork before its SIGSTOP lands.
  for (let round = 0; round < 10; round++) {
    const found = [rootPid, ...descendantsOf(rootPid)].filter((pid) => !stopped.has(pid));
    if (found.length === 0) break;
    for (const pid of found) {
      signal(pid, "SIGSTOP");
      stopped.add(pid);
    }
  }
  signal(-rootPid, "SIGKILL");
  for (const pid of stopped) signal(pid, "SIGKILL");
  return [...stopped];
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Every process below `root`, from /proc. */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // The command name may hold spaces and parentheses; the fields after the last ")" do not.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (!Number.isFinite(ppid)) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    for (const child of children.get(pending.pop() as number) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}
