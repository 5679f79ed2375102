import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { accountHome } from "../pulumiCli";

/**
 * What a killed `pulumi up` or `destroy` leaves behind, read from the backend itself: the lock, the
 * state's metadata sidecar, and the operations the checkpoint records as started and never finished.
 * Only a file backend (file://) is read directly; the layout is the CLI's own (diy backend, project mode).
 */

/** Where one stack of a file backend keeps its state and its lock. */
export interface FileBackendStack {
  /** `.pulumi/stacks/<project>`: the checkpoint `<stack>.json` and its sidecars live here. */
  stacksDir: string;
  stack: string;
  /** `.pulumi/locks/organization/<project>/<stack>`: one file per lock holder. */
  lockDir: string;
}

export interface Sidecar {
  file: string;
  bytes: number;
}

export interface LockHolder {
  file: string;
  pid?: number;
  hostname?: string;
  timestamp?: string;
  /** The holder is a process on this machine that still runs: a live run, not a killed one. */
  running: boolean;
}

export interface PendingOperation {
  /** creating, updating, deleting, reading or importing. */
  type: string;
  urn: string;
  /** A replaced copy waiting for deletion (`delete: true`): only an `up` replacing it deletes those. */
  condemned: boolean;
}

/** The stack's folders, when the backend is a file:// URL; undefined for Pulumi Cloud and object stores. */
export function fileBackendStack(backendUrl: string, project: string, stackRef: string): FileBackendStack | undefined {
  if (!backendUrl.startsWith("file://")) return undefined;
  const raw = backendUrl.slice("file://".length).split("?")[0] ?? "";
  const root = raw === "~" || raw.startsWith("~/") ? path.join(accountHome(), raw.slice(1)) : path.resolve(raw);
  // `--stack` may be fully qualified: organization/<project>/<stack>.
  const parts = stackRef.split("/");
  const stack = parts[parts.length - 1] ?? stackRef;
  const projectName = parts.length === 3 ? (parts[1] ?? project) : project;
  return {
    stacksDir: path.join(root, ".pulumi", "stacks", projectName),
    stack,
    lockDir: path.join(root, ".pulumi", "locks", "organization", projectName, stack),
  };
}

/** The project's name, from Pulumi.yaml's top-level `name:`. */
export function projectName(programDir: string): string {
  const file = ["Pulumi.yaml", "Pulumi.yml"].map((name) => path.join(programDir, name)).find(fs.existsSync);
  const text = file ? fs.readFileSync(file, "utf8") : "";
  const name = /^name:\s*["']?([^"'\s#]+)/m.exec(text)?.[1];
  if (!name)
    throw new Error(`no project name in ${file ?? path.join(programDir, "Pulumi.yaml")}: add \`name: <project>\``);
  return name;
}

/**
 * The metadata sidecar of the stack's checkpoint (`<stack>.json.attrs`, or `.json.gz.attrs` when the
 * backend compresses). Only this one stops the state from loading; the backup's (`.json.bak.attrs`),
 * which a kill can leave empty too, does not, so it is left alone.
 */
export function checkpointSidecars(stack: FileBackendStack): Sidecar[] {
  return [`${stack.stack}.json.attrs`, `${stack.stack}.json.gz.attrs`]
    .map((name) => path.join(stack.stacksDir, name))
    .filter((file) => fs.existsSync(file))
    .map((file) => ({ file, bytes: fs.statSync(file).size }));
}

/** A `pulumi` process with this pid runs here; a pid reused by something else does not count. */
function pulumiRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("pulumi");
  } catch {
    return true; // No /proc (macOS): the pid alone has to do.
  }
}

/** Who holds the stack's lock; empty when it is not locked. */
export function lockHolders(stack: FileBackendStack): LockHolder[] {
  if (!fs.existsSync(stack.lockDir)) return [];
  return fs
    .readdirSync(stack.lockDir)
    .filter((name) => name.endsWith(".json"))
    .map((name) => {
      const file = path.join(stack.lockDir, name);
      let content: { pid?: number; hostname?: string; timestamp?: string } = {};
      try {
        content = JSON.parse(fs.readFileSync(file, "utf8"));
      } catch {
        // A lock file the kill left half-written still locks the stack; it just says nothing about its holder.
      }
      const here = content.hostname === os.hostname();
      return { file, ...content, running: here && content.pid !== undefined && pulumiRunning(content.pid) };
    });
}

/** The operations a `pulumi stack export` records as started and not finished. */
export function pendingOperations(exported: string): PendingOperation[] {
  const deployment = (JSON.parse(exported) as { deployment?: { pending_operations?: unknown[] } }).deployment;
  return (
    (deployment?.pending_operations ?? []) as { type: string; resource: { urn: string; delete?: boolean } }[]
  ).map((op) => ({ type: op.type, urn: op.resource.urn, condemned: op.resource.delete === true }));
}

/** `creating ProxyUser user-00`: the operation as a CI log reader knows the resource. */
export function describeOperation(op: PendingOperation): string {
  // urn:pulumi:<stack>::<project>::<parent types$type>::<name>
  const parts = op.urn.split("::");
  const type = parts[2]?.split(":").pop() ?? "";
  return `${op.type} ${type} ${parts[parts.length - 1] ?? op.urn}`;
}

export type Operation = "up" | "destroy";

export type Decision = { finish: Operation | "nothing"; why: string } | { refuse: string };

/**
 * Which operation finishes the killed one. A destroy never creates or updates, and only an up deletes
 * a replaced copy; a delete of a live object is either, so then the caller must say which it was. An
 * empty record proves nothing after a kill: the engine saves its records of started writes in
 * batches, so the last ones can be missing (a kill with four creates at the API left one recorded).
 */
export function decide(
  pending: PendingOperation[],
  requested: Operation | undefined,
  stack: string,
  locked: boolean,
): Decision {
  const upOnly = pending.filter((op) => op.type !== "deleting" || op.condemned);
  const liveDeletes = pending.filter((op) => op.type === "deleting" && !op.condemned);
  const creates = pending.filter((op) => op.type === "creating" || op.type === "importing");
  const list = (ops: PendingOperation[]) => ops.map(describeOperation).join(", ");
  const askWhich = `Fix: \`pulumi-proxy recover --stack ${stack} --up\` if a \`pulumi up\` was killed, \`--destroy\` if a \`pulumi destroy\` was.`;
  if (requested === "destroy") {
    if (creates.length > 0) {
      return {
        refuse:
          `stack ${stack}: the killed run was a \`pulumi up\` (it was ${list(creates)}), not a destroy. A destroy now ` +
          "would leave the objects those creates may have made at the API, unknown to the state. Fix: " +
          `\`pulumi-proxy recover --stack ${stack} --up\` (the API replays the creates), then \`pulumi destroy\`.`,
      };
    }
    return { finish: "destroy", why: "you said a `pulumi destroy` was killed; a delete that finds nothing is done" };
  }
  if (requested === "up") return { finish: "up", why: "you said a `pulumi up` was killed" };
  if (upOnly.length > 0) {
    return {
      finish: "up",
      why: `the killed run was a \`pulumi up\`: it was ${list(upOnly)}, which a destroy never does`,
    };
  }
  if (liveDeletes.length > 0) {
    return {
      refuse:
        `stack ${stack}: the killed run was ${list(liveDeletes)} and nothing else, so it was a \`pulumi destroy\` or ` +
        `a \`pulumi up\` that removes them, and the state does not say which. ${askWhich}`,
    };
  }
  if (!locked)
    return { finish: "nothing", why: "the stack is not locked and records no operation in flight: no run was killed" };
  return {
    refuse:
      `stack ${stack}: a run was killed (it left the lock) but the state records no operation in flight, and ` +
      `that proves nothing: the engine may not have saved its record of the last writes it sent. ${askWhich}`,
  };
}
