import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import path from "node:path";
import { REPO_ROOT } from "./pulumi";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built command, as `npx pulumi-proxy` runs it: a child process with the stack's environment. */
export function runCli(args: string[], env: Record<string, string>, cwd = REPO_ROOT): Promise<CliResult> {
  return outputOf(spawn(process.execPath, [path.join(REPO_ROOT, "dist", "cli", "main.js"), ...args], { cwd, env }));
}

/** A child's exit code, the signal that ended it if any, and all it wrote, once it has closed. */
export function outputOf(
  child: ChildProcessWithoutNullStreams,
): Promise<CliResult & { signal: NodeJS.Signals | null }> {
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
