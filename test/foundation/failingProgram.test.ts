import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { type CliWorkspace, cliWorkspace } from "../support/pulumiCli";

/**
 * A guard, not a figure: a failing program is reported in seconds, while the hang this file guards
 * against (the run harness's error report looping in Node's util.inspect, see
 * tools/language-host/inspect-guard.cjs) takes minutes and gigabytes.
 */
const KILL_AFTER_MS = 120_000;

interface PulumiRun {
  code: number | null;
  killedByGuard: boolean;
  output: string;
}

const workspaces: CliWorkspace[] = [];
afterEach(() => {
  for (const workspace of workspaces.splice(0)) workspace.cleanup();
});

/** A local program (Pulumi.yaml in its own folder) outside the repository, with a stack. */
async function localProgram(files: Record<string, string>): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
  const cli = cliWorkspace();
  workspaces.push(cli);
  const dir = cli.project("program", files);
  const init = await pulumi(["stack", "init", "dev", "--non-interactive"], dir, cli.env);
  expect(init.code, init.output).toBe(0);
  return { dir, env: cli.env };
}

/** The CLI as a user runs it. The guard kills its whole process group, language host and node included. */
function pulumi(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<PulumiRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("pulumi", args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let killedByGuard = false;
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const guard = setTimeout(() => {
      killedByGuard = true;
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    }, KILL_AFTER_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, killedByGuard, output });
    });
  });
}

function expectReportedFailure(run: PulumiRun, message: string): void {
  expect(run.killedByGuard, `still running after ${KILL_AFTER_MS / 1000} s:\n${run.output}`).toBe(false);
  expect(run.code, run.output).not.toBe(0);
  expect(run.output).toContain(message);
  // The run harness reported the error itself and exited with its "already reported" code; a crash
  // (out of memory, say) would show up as the language host's "non-zero exit code" instead.
  expect(run.output).toContain("failed with an unhandled exception");
  expect(run.output).not.toContain("non-zero exit code");
}

describe("a local program that fails, through the real CLI", () => {
  it("a JavaScript program that throws at its top fails `pulumi preview` with its message", async () => {
    const { dir, env } = await localProgram({
      "Pulumi.yaml": "name: throws-at-top\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
      "package.json": JSON.stringify({ name: "throws-at-top", main: "index.js" }),
      "index.js": 'throw new Error("the program refuses to start");\n',
    });
    const run = await pulumi(["preview", "--non-interactive"], dir, env);
    expectReportedFailure(run, "Error: the program refuses to start");
  });

  it("a TypeScript program whose apply throws fails `pulumi up` with its message", async () => {
    const { dir, env } = await localProgram({
      "Pulumi.yaml": "name: throws-in-apply\nruntime: nodejs\n",
      "package.json": JSON.stringify({ name: "throws-in-apply", main: "index.ts" }),
      "index.ts": [
        'import * as pulumi from "@pulumi/pulumi";',
        "export const size = pulumi.output(3).apply((value) => {",
        '  if (value < 10) throw new Error("size 3 is below the minimum of 10");',
        "  return value;",
        "});",
        "",
      ].join("\n"),
    });
    const run = await pulumi(["up", "--yes", "--non-interactive"], dir, env);
    expectReportedFailure(run, "Error: size 3 is below the minimum of 10");
  });
});
