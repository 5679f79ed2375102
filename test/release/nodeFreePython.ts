import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { CliResult } from "../../harness/crash/cliStack";
import { killTree } from "../../harness/crash/processTree";
import { outputOf } from "../support/cli";
import { pipSettings } from "../support/machineCaches";
import { installBlock, nodeFreePath, REGISTRY_ENV, runInstallBlock } from "./nodeFree";
import { builtOnce, type ServedRelease } from "./releaseFolder";

const exec = promisify(execFile);

/**
 * The virtual environment README.md's Python install block makes, run word for word on a machine with
 * python3 and no Node.js: made once per release build, beside it (`<build>-python/venv`), under a lock
 * like the build's, and named by absolute path by every node-free Python program of the suite. No
 * program installs into it (the language host only reads which packages it holds).
 */
export async function sharedPythonVenv(release: ServedRelease): Promise<string> {
  const root = `${release.dir}-python`;
  const ready = path.join(root, "ready");
  await builtOnce(ready, async () => {
    // What a builder that died left half made.
    for (const made of ["venv", "tools"]) fs.rmSync(path.join(root, made), { recursive: true, force: true });
    // The venv's interpreter links to the python3 on this PATH: it lives in `root`, as long as the venv.
    const env = {
      PATH: nodeFreePath(root, ["python3"]),
      HOME: root,
      ...REGISTRY_ENV,
      ...pipSettings(),
    };
    await runInstallBlock("python", installBlock("python", release), root, env);
    fs.writeFileSync(ready, "");
  });
  return path.join(root, "venv");
}

/** A command's output and exit code, whatever the code. */
export type Ran = CliResult;

/**
 * A machine with Python and no Node.js, as the README's Python path serves it: a PATH with the Pulumi
 * CLI and python3 only, an empty Pulumi home (the engine fetches the plugin from the wheel's URL), a
 * file backend, and the virtual environment the README's Python install block made for this release
 * (`sharedPythonVenv`), which each program of this machine names in its Pulumi.yaml. Once the engine
 * has fetched the plugin, `linkTool` puts its executable on PATH as `pulumi-proxy`, as the README's
 * tool block says.
 */
export class NodeFreePythonMachine {
  readonly env: NodeJS.ProcessEnv;
  readonly venv: string;
  readonly #shims: string;

  private constructor(
    readonly root: string,
    readonly release: ServedRelease,
    venv: string,
  ) {
    fs.mkdirSync(path.join(root, "backend"), { recursive: true });
    this.env = {
      PATH: nodeFreePath(root, ["python3"]),
      HOME: root,
      PULUMI_HOME: path.join(root, "home"),
      PULUMI_BACKEND_URL: `file://${path.join(root, "backend")}`,
      PULUMI_CONFIG_PASSPHRASE: "nodefree",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      ...REGISTRY_ENV,
      ...pipSettings(),
    };
    this.#shims = path.join(root, "tools");
    this.venv = venv;
  }

  static async create(root: string, release: ServedRelease): Promise<NodeFreePythonMachine> {
    return new NodeFreePythonMachine(root, release, await sharedPythonVenv(release));
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
