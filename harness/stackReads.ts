import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { OutputMap, Stack, UpdateSummary } from "@pulumi/pulumi/automation";
import { SECRET_SIGNATURE, workspaceEnv } from "../provider/core/pulumiState";

/**
 * The two reads the Automation API makes after a run, done at their first use instead of at once.
 *
 * After each up it reads the outputs, and after each up, refresh and destroy the run's summary (`stack
 * history`): two more CLI starts per run, about 0.5 s of CPU with the passphrase's key derivation that
 * the outputs need, and most callers read neither. So `up`, `refresh` and `destroy` return stand-ins
 * that run the same CLI command, synchronously, the first time a property is read. A stand-in first
 * read after the stack's state has moved on (a later run wrote it) throws instead of answering for the
 * later state; read it before the next run. On a backend other than a folder, whose files tell
 * whether the state moved, they are read at once, as the Automation API does.
 */
export function readResultsAtFirstUse(stack: Stack, backendUrl: string | undefined): void {
  const cli = (args: string[]) =>
    execFileSync(stack.workspace.pulumiCommand.command, [...args, "--stack", stack.name, "--non-interactive"], {
      cwd: stack.workspace.workDir,
      env: workspaceEnv(stack.workspace),
      encoding: "utf8",
      maxBuffer: 1 << 30,
    });
  const backendDir = backendUrl?.startsWith("file://") ? backendUrl.slice("file://".length) : undefined;
  const version = backendDir === undefined ? undefined : () => stateVersion(backendDir, stack.name);
  stack.outputs = async () => atFirstUse("the outputs of this up", version, () => outputsOf(cli)) as OutputMap;
  // The summary without secrets in plaintext, which needs no key derivation; nobody reads them.
  stack.info = async (showSecrets?: boolean) =>
    atFirstUse("the summary of this run", version, () => summaryOf(cli, showSecrets ?? false));
}

/**
 * The stack's files in the backend (`stacks/<project>/<stack>.json…`, `history/<project>/<stack>/…`)
 * with their sizes and times: a run that saves the state changes them; other stacks' runs do not.
 */
function stateVersion(backendDir: string, stackName: string): string {
  const files: string[] = [];
  for (const sub of ["stacks", "history"]) {
    const dir = path.join(backendDir, ".pulumi", sub);
    if (!fs.existsSync(dir)) continue;
    for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath, entry.name);
      const segments = path.relative(dir, file).split(path.sep);
      if (!entry.isFile() || !segments.some((part) => part === stackName || part.startsWith(`${stackName}.json`))) {
        continue;
      }
      const stat = fs.statSync(file);
      files.push(`${file}:${stat.size}:${stat.mtimeMs}`);
    }
  }
  return files.sort().join("\n");
}

/** An object that is `read()`'s answer, asked for at its first use; see readResultsAtFirstUse. */
function atFirstUse<T extends object>(what: string, version: (() => string) | undefined, read: () => T): T {
  if (version === undefined) return read();
  const recorded = version();
  let value: T | undefined;
  const load = (): T => {
    if (value === undefined) {
      if (version() !== recorded) {
        throw new Error(`${what} was first read after a later run changed the stack: read it before the next run`);
      }
      value = read();
    }
    return value;
  };
  return new Proxy({} as T, {
    // The promise the stand-in is returned through asks for `then` (is it a promise itself?): that
    // is not a first use. Neither a summary nor an outputs map has one (an output named `then` would
    // read as missing until something else was read).
    get: (_target, key) => (key === "then" && value === undefined ? undefined : Reflect.get(load(), key)),
    has: (_target, key) => Reflect.has(load(), key),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(load(), key);
      // A proxy may not report a property its (empty) target lacks as non-configurable.
      return descriptor && { ...descriptor, configurable: true };
    },
    set: (_target, key, value) => Reflect.set(load(), key, value),
  });
}

/** What Stack.info returns: the newest entry of `stack history`, its times as dates. */
function summaryOf(cli: (args: string[]) => string, showSecrets: boolean): UpdateSummary {
  const args = ["stack", "history", "--json", "--page-size", "1", "--page", "1"];
  const history = JSON.parse(cli(showSecrets ? [...args, "--show-secrets"] : args), (key, value) =>
    key === "startTime" || key === "endTime" ? new Date(value) : value,
  ) as UpdateSummary[];
  const newest = history[0];
  if (!newest) throw new Error("the stack has no history: no run has finished on it");
  return newest;
}

/** A secret as `stack export --show-secrets` writes it: the marker and the value's JSON in plaintext. */
function isSecret(value: unknown): value is { plaintext: string } {
  return typeof value === "object" && value !== null && SECRET_SIGNATURE in value && "plaintext" in value;
}

/** A value of an exported state with its secrets in plaintext, as `stack output --show-secrets` prints it. */
function revealed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revealed);
  if (isSecret(value)) return revealed(JSON.parse(value.plaintext));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, revealed(inner)]));
}

/** A secret as plain `stack export` writes it: the marker and its ciphertext. */
function isEncrypted(value: unknown): boolean {
  return typeof value === "object" && value !== null && SECRET_SIGNATURE in value && "ciphertext" in value;
}

/** Whether a value holds a secret anywhere. */
function holdsSecret(value: unknown): boolean {
  if (isEncrypted(value)) return true;
  return value !== null && typeof value === "object" && Object.values(value).some(holdsSecret);
}

/** The stack's outputs as `stack export` (with `args`) writes them. */
function exportedOutputs(cli: (args: string[]) => string, args: string[]): Record<string, unknown> {
  const exported = JSON.parse(cli(["stack", "export", ...args])) as {
    deployment: { resources?: Record<string, unknown>[] };
  };
  const root = exported.deployment.resources?.find((resource) => resource.type === "pulumi:pulumi:Stack");
  return (root?.outputs ?? {}) as Record<string, unknown>;
}

/**
 * The outputs as the Automation API gives them, from `stack export` instead of its two `stack output`
 * calls (masked, then plaintext, to learn which are secret): the exported state marks each secret
 * itself. A plain export first: only outputs that hold a secret need `--show-secrets`, and with it the
 * passphrase's key derivation, about 0.2 s of CPU, most of a CLI call.
 */
function outputsOf(cli: (args: string[]) => string): OutputMap {
  const plain = exportedOutputs(cli, []);
  const outputs = Object.values(plain).some(holdsSecret) ? exportedOutputs(cli, ["--show-secrets"]) : plain;
  return Object.fromEntries(
    Object.entries(outputs).map(([key, value]) => [key, { value: revealed(value), secret: isSecret(value) }]),
  );
}
