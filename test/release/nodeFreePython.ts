import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { CliResult } from "../../harness/crash/cliStack";
import { killTree } from "../../harness/crash/processTree";
import { outputOf } from "../support/cli";
import { machineCaches } from "../support/machineCaches";
import { installBlock, nodeFreePath, REGISTRY_ENV, runInstallBlock } from "./nodeFree";
import type { ServedRelease } from "./releaseFolder";

const exec = promisify(execFile);

/** A command's output and exit code, whatever the code. */
export type Ran = CliResult;

/**
 * A machine with Python and no Node.js, as the README's Python path serves it: a PATH with the Pulumi
 * CLI and python3 only, an empty Pulumi home (the engine fetches the plugin from the wheel's URL), a
 * file backend, and one virtual environment made by the README's Python install block, which each
 * program of this machine names in its Pulumi.yaml. Once the engine has fetched the plugin, `linkTool`
 * puts its executable on PATH as `pulumi-proxy`, as the README's tool block says.
 */
export class NodeFreePythonMachine {
  readonly env: NodeJS.ProcessEnv;
  readonly venv: string;
  readonly #shims: string;

  private constructor(
    readonly root: string,
    readonly release: ServedRelease,
  ) {
    fs.mkdirSync(path.join(root, "backend"), { recursive: true });
    const { PIP_CACHE_DIR } = machineCaches();
    this.env = {
      PATH: nodeFreePath(root, ["python3"]),
      HOME: root,
      PULUMI_HOME: path.join(root, "home"),
      PULUMI_BACKEND_URL: `file://${path.join(root, "backend")}`,
      PULUMI_CONFIG_PASSPHRASE: "nodefree",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      ...REGISTRY_ENV,
      ...(PIP_CACHE_DIR ? { PIP_CACHE_DIR } : {}),
    };
    this.#shims = path.join(root, "tools");
    this.venv = path.join(root, "python", "venv");
  }

  static async create(root: string, release: ServedRelease): Promise<NodeFreePythonMachine> {
    const machine = new NodeFreePythonMachine(root, release);
    fs.mkdirSync(path.dirname(machine.venv), { recursive: true });
    await runInstallBlock("python", installBlock("python", release), path.dirname(machine.venv), machine.env);
    return machine;
  }

  /** A Python program's folder: its Pulumi.yaml, naming the machine's virtual environment, and its files. */
  program(name: string, files: Record<string, string>): string {
    const dir = path.join(this.root, name);
    fs.mkdirSync(dir, { recursive: true });
    const yaml = `name: ${name}\nruntime:\n  name: python\n  options:\n    virtualenv: ${this.venv}\n`;
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), yaml);
    for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
    return dir;
  }

  /** The plugin executable the engine installed. */
  get pluginExecutable(): string {
    const home = this.env.PULUMI_HOME ?? "";
    return path.join(home, "plugins", `resource-proxy-v${this.release.version}`, "pulumi-resource-proxy");
  }

  /**
   * `ln -s <plugin> ~/.local/bin/pulumi-proxy`, as the README's tool block says, once the plugin is in
   * the cache: the engine put it there, or else the README's plugin block does.
   */
  async linkTool(): Promise<void> {
    if (!fs.existsSync(this.pluginExecutable)) {
      await runInstallBlock("plugin", installBlock("plugin", this.release), this.root, this.env);
    }
    const link = path.join(this.#shims, "pulumi-proxy");
    if (!fs.existsSync(link)) fs.symlinkSync(this.pluginExecutable, link);
  }

  /** A command by its name on the machine's PATH (`pulumi`, `pulumi-proxy`), with `extra` environment. */
  async run(command: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}): Promise<Ran> {
    return (await this.start(command, args, cwd, extra)).exited;
  }

  /** Runs and throws with the output unless it exits 0. */
  async must(command: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}): Promise<Ran> {
    const ran = await this.run(command, args, cwd, extra);
    if (ran.code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${ran.code}:\n${ran.stdout}${ran.stderr}`);
    return ran;
  }

  /** A command in the background, in a process group of its own, and a kill of it with everything below it. */
  async start(command: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}) {
    const env = { ...this.env, ...extra };
    const found = await exec("/bin/sh", ["-c", `command -v ${command}`], { env });
    const child = spawn(found.stdout.trim(), args, { cwd, env, detached: true });
    child.stdin.end();
    const exited: Promise<Ran> = outputOf(child);
    return {
      exited,
      kill: () => {
        killTree(child.pid as number);
        return exited;
      },
    };
  }
}
