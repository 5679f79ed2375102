import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type LocalStack, type LocalStackOptions, openLocalStack } from "../localStack";
import { killTree } from "./processTree";

/**
 * A stack driven through the `pulumi` command line, as a user or a CI job drives it: a program folder
 * (Pulumi.yaml, index.js, spec.json) in an isolated local stack (harness/localStack.ts). The program declares what
 * spec.json lists, so each run can change the stack without new code. Runs can be started in the
 * background and killed with their whole process tree.
 */

export type ResourceType = "ProxyUser" | "ApiKey" | "IpAllocation";

export interface DeclaredResource {
  type: ResourceType;
  /** The Pulumi resource name. */
  name: string;
  args: Record<string, unknown>;
}

export interface StackSpec {
  resources: DeclaredResource[];
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  readonly pid: number;
  readonly exited: Promise<CliResult>;
  /** SIGKILL to the CLI and every process below it; resolves once the CLI is gone. */
  kill(): Promise<CliResult>;
}

export interface CliStackOptions {
  /** The folder holding bin/pulumi's `bin`. */
  binDir: string;
  /** Where the program folder goes: below a node_modules that resolves `pulumi-proxy`. */
  parentDir: string;
  apiUrl: string;
  apiKey: string;
  project?: string;
  /** More environment for every run (PULUMI_SKIP_CHECKPOINTS). */
  env?: Record<string, string>;
  /** A secrets provider instead of the passphrase (harness/vaultTransit.ts). */
  secretsProvider?: LocalStackOptions["secretsProvider"];
}

const PROGRAM = `"use strict";
const fs = require("node:fs");
const path = require("node:path");
const proxy = require("pulumi-proxy");
const spec = JSON.parse(fs.readFileSync(path.join(__dirname, "spec.json"), "utf8"));
for (const resource of spec.resources) new proxy[resource.type](resource.name, resource.args);
`;

export class CliStack {
  private constructor(
    readonly dir: string,
    private readonly local: LocalStack,
    private readonly binDir: string,
  ) {}

  static async create(options: CliStackOptions): Promise<CliStack> {
    const dir = path.join(options.parentDir, `c${Date.now().toString(36)}${randomBytes(3).toString("hex")}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, "Pulumi.yaml"),
      `name: ${options.project ?? "pulumi-proxy-crash"}\nruntime: nodejs\nmain: index.js\n`,
    );
    fs.writeFileSync(path.join(dir, "index.js"), PROGRAM);
    fs.writeFileSync(path.join(dir, "spec.json"), JSON.stringify({ resources: [] }));
    const local = await openLocalStack({
      binDir: options.binDir,
      label: "crash",
      workDir: dir,
      ...(options.env ? { envVars: options.env } : {}),
      ...(options.secretsProvider ? { secretsProvider: options.secretsProvider } : {}),
      config: {
        "proxy:apiUrl": { value: options.apiUrl },
        "proxy:apiKey": { value: options.apiKey, secret: true },
      },
    });
    return new CliStack(dir, local, options.binDir);
  }

  get stackName(): string {
    return this.local.stackName;
  }

  /** PULUMI_HOME, the file backend, the passphrase and PATH of this stack. */
  get env(): Record<string, string> {
    return this.local.envVars;
  }

  setSpec(spec: StackSpec): void {
    fs.writeFileSync(path.join(this.dir, "spec.json"), JSON.stringify(spec, null, 2));
  }

  /** `pulumi <args>` in the background, in a process group of its own. */
  start(args: string[]): RunningCli {
    const child = spawn(path.join(this.binDir, "pulumi"), [...args, "--non-interactive"], {
      cwd: this.dir,
      env: { ...process.env, ...this.env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = collect(child);
    const pid = child.pid as number;
    return {
      pid,
      exited,
      kill: async () => {
        killTree(pid);
        return exited;
      },
    };
  }

  run(args: string[]): Promise<CliResult> {
    return this.start(args).exited;
  }

  /** Runs and throws with the CLI's output unless it exits 0. */
  async must(args: string[]): Promise<CliResult> {
    const result = await this.run(args);
    if (result.code !== 0) throw new Error(`pulumi ${args.join(" ")} exited ${result.code}:\n${tail(result)}`);
    return result;
  }

  up(...extra: string[]): Promise<CliResult> {
    return this.run(["up", "--yes", "--skip-preview", "--stack", this.stackName, ...extra]);
  }

  /** The checkpoint as `pulumi stack export --show-secrets` prints it. */
  async exportState(): Promise<Deployment> {
    const result = await this.must(["stack", "export", "--show-secrets", "--stack", this.stackName]);
    return (JSON.parse(result.stdout) as { deployment: Deployment }).deployment;
  }

  async cleanup(): Promise<void> {
    await this.local.cleanup();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface StateResource {
  urn: string;
  type: string;
  id?: string;
  custom?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

export interface Deployment {
  resources?: StateResource[];
  pending_operations?: { type: string; resource: StateResource }[];
}

export function tail(result: CliResult, lines = 40): string {
  return `${result.stdout}\n${result.stderr}`.trim().split("\n").slice(-lines).join("\n");
}

function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
