import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { inject } from "vitest";
import { machineCaches } from "./machineCaches";
import { outsideFolder } from "./outside";
import { REPO_ROOT } from "./pulumi";

/**
 * The CLI binary driven as a user drives it, in folders outside the repository: for what the
 * Automation API does not offer (gen-sdk, import, convert, policy packs, killing the engine).
 */
export interface CliWorkspace {
  /** Holds the projects, Pulumi home, file backend and HOME of this workspace. */
  dir: string;
  /** Isolation variables, the provisioned CLI first on PATH, and `PULUMI_PROXY_TEST_MARKER`. */
  env: NodeJS.ProcessEnv;
  /** A value found in the environment of every process the CLI starts from here, and of no other. */
  marker: string;
  /** Writes `files` into `<dir>/<name>`, with the repository's node_modules linked in unless told not to; returns the folder. */
  project(name: string, files: Record<string, string>, options?: { nodeModules?: boolean }): string;
  cleanup(): void;
}

export function cliWorkspace(): CliWorkspace {
  const folder = outsideFolder();
  for (const sub of ["home", "pulumi-home", "backend"]) fs.mkdirSync(path.join(folder.dir, sub));
  const marker = `cli-${randomBytes(6).toString("hex")}`;
  const env = {
    ...process.env,
    ...machineCaches(),
    HOME: path.join(folder.dir, "home"),
    PULUMI_HOME: path.join(folder.dir, "pulumi-home"),
    PULUMI_BACKEND_URL: `file://${path.join(folder.dir, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "cli-workspace",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_PROXY_TEST_MARKER: marker,
    PATH: `${inject("pulumiBinDir")}${path.delimiter}${process.env.PATH ?? ""}`,
  };
  return {
    dir: folder.dir,
    env,
    marker,
    project(name, files, { nodeModules = true } = {}) {
      const dir = path.join(folder.dir, name);
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
      if (nodeModules) fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
      return dir;
    },
    cleanup: folder.cleanup,
  };
}

export interface CliRun {
  code: number | null;
  output: string;
}

/** Starts the CLI in its own process group (so a test can kill the CLI alone, or everything). */
export function startPulumi(args: string[], cwd: string, env: NodeJS.ProcessEnv): ChildProcess & { output(): string } {
  const child = spawn("pulumi", [...args, "--non-interactive"], {
    cwd,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  return Object.assign(child, { output: () => output });
}

/** Runs the CLI to its end; after `killAfterMs` its whole process group is killed and the run fails. */
export function pulumi(args: string[], cwd: string, env: NodeJS.ProcessEnv, killAfterMs = 180_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = startPulumi(args, cwd, env);
    const guard = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      reject(new Error(`pulumi ${args.join(" ")} still running after ${killAfterMs / 1000} s:\n${child.output()}`));
    }, killAfterMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, output: child.output() });
    });
  });
}

/** Processes (pid and command line) whose environment holds `PULUMI_PROXY_TEST_MARKER=<marker>`. */
export function processesMarked(marker: string): { pid: number; command: string }[] {
  const wanted = `PULUMI_PROXY_TEST_MARKER=${marker}`;
  const found: { pid: number; command: string }[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (!environ.includes(wanted)) continue;
      const command = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
      found.push({ pid: Number(entry), command });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}
