import { spawn } from "node:child_process";

export interface ShellRun {
  code: number | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
}

/** A bash script run to its end, with `input` on its stdin. */
export function runShell(
  flags: string[],
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  input = "",
): Promise<ShellRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [...flags, "-c", script], { cwd, env });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
    child.stdin.end(input);
  });
}
