import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { COMMANDS } from "../../cli/commands";
import { REPO_ROOT } from "../support/pulumi";

const CLI = path.join(REPO_ROOT, "dist", "cli", "main.js");
const VERSION: string = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Resolves with the server's URL once the command prints it. */
function urlOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const url = /listening on (\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    child.on("exit", (code) => reject(new Error(`server exited ${code} before listening: ${out}`)));
  });
}

describe("the pulumi-proxy command", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });

  it("--version prints the package's version", async () => {
    expect(await run(["--version"])).toMatchObject({ code: 0, stdout: `pulumi-proxy ${VERSION}\n` });
  });

  it("--help prints the tool's usage, made from the command table: every command, no one command's description", async () => {
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    for (const command of COMMANDS) {
      const listed = help.stdout.split("\n").find((line) => line.startsWith(`  ${command.name} `));
      expect(listed, command.name).toMatch(/^ {2}[a-z]+ +\S/);
      expect(listed?.endsWith(command.summary), command.name).toBe(true);
      for (const line of command.usage) expect(help.stdout).toContain(line);
    }
    // drift's own text (what it runs, its flags, its exit codes) is drift's --help, not the tool's.
    expect(help.stdout).not.toContain("pulumi preview --refresh");
    expect(help.stdout).not.toContain("Exit codes");
  });

  it("without a command says so, without a stray space, and shows the usage", async () => {
    const result = await run([]);
    expect(result.code).toBe(1);
    expect(result.stderr.split("\n")[0]).toBe("pulumi-proxy: a command is required");
    expect(result.stderr).toContain("pulumi-proxy server");
  });

  it("server takes the flags of npm run server, serves the API and stops cleanly on SIGTERM", async () => {
    const help = await run(["server", "--help"]);
    for (const flag of ["--port", "--root-key", "--rate-limit", "--state-file", "--fault-rate", "--log"]) {
      expect(help.stdout).toContain(flag);
    }
    const rootKey = `live_${"a".repeat(32)}`;
    const child = spawn(process.execPath, [CLI, "server", "--port", "0", "--root-key", rootKey, "--rate-limit", "7"]);
    children.push(child);
    const url = await urlOf(child);
    const answer = await fetch(`${url}/v1/proxy-users`, { headers: { authorization: `Bearer ${rootKey}` } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-ratelimit-limit")).toBe("7");
    const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
