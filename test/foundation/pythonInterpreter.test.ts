import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { REPO_ROOT } from "../support/pulumi";
import { type CliWorkspace, cliWorkspace, pulumi } from "../support/pulumiCli";

const exec = promisify(execFile);

/**
 * The Python language host (tools/language-host/python.go, pythonenv.go) installs only into an
 * environment Pulumi creates. "The system Python" here is a throwaway interpreter made outside the
 * repository and put first on PATH, so the machine's own is never at stake: what it holds must be
 * the same after `pulumi install` and `pulumi convert --language python` as before.
 */
describe("the Python host leaves the interpreter on PATH alone", () => {
  let cli: CliWorkspace;
  let systemPython: string;
  let env: NodeJS.ProcessEnv;

  /** What the throwaway interpreter holds, as `pip list` says it. */
  const installed = async () =>
    JSON.parse(
      (await exec(systemPython, ["-m", "pip", "list", "--format=json", "--disable-pip-version-check"])).stdout,
    );

  beforeAll(async () => {
    cli = cliWorkspace();
    const systemDir = path.join(cli.dir, "system-python");
    // The interpreter itself, not a version manager's shim that would pick another one.
    const python = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim();
    await exec(python, ["-m", "venv", systemDir]);
    systemPython = path.join(systemDir, "bin", "python3");
    const { VIRTUAL_ENV: _activated, ...rest } = cli.env;
    env = {
      ...rest,
      PATH: [inject("pulumiBinDir"), path.join(systemDir, "bin"), process.env.PATH].join(path.delimiter),
      // The machine's pip cache: what the project's own environment downloads is fetched once.
      PIP_CACHE_DIR: process.env.PIP_CACHE_DIR ?? path.join(os.homedir(), ".cache", "pip"),
    };
    // The schema `pulumi convert` reads comes from the plugin, as a user's `pulumi-proxy provider install` puts it.
    const pluginsDir = path.join(cli.env.PULUMI_HOME ?? "", "plugins");
    await exec(process.execPath, [
      path.join(REPO_ROOT, "dist", "cli", "main.js"),
      "provider",
      "install",
      "--plugins-dir",
      pluginsDir,
    ]);
  });
  afterAll(() => cli?.cleanup());

  it("`pulumi install` on a bare `runtime: python` stops, naming the virtualenv option, and installs nothing", async () => {
    const dir = cli.project(
      "bare",
      {
        "Pulumi.yaml": "name: bare\nruntime: python\n",
        "__main__.py": "import pulumi\n",
        "requirements.txt": "# nothing beyond what pulumi install always adds\n",
      },
      { nodeModules: false },
    );
    const before = await installed();
    const run = await pulumi(["install"], dir, env);
    expect(run.code, run.output).not.toBe(0);
    expect(run.output).toContain("Pulumi.yaml names no virtual environment");
    expect(run.output).toContain(path.dirname(systemPython));
    expect(run.output).toMatch(/options:\s+virtualenv: venv/);
    expect(await installed()).toEqual(before);
    expect(fs.existsSync(path.join(dir, "venv"))).toBe(false);
  });

  it("`pulumi convert --language python` makes the project its own venv and names no SDK by a bare name", async () => {
    const dir = cli.project(
      "pcl",
      { "main.pp": 'resource legacy "proxy:index:ProxyUser" {\n  name = "legacy"\n}\n' },
      { nodeModules: false },
    );
    const before = await installed();
    const run = await pulumi(["convert", "--from", "pcl", "--language", "python", "--out", "../py"], dir, env, 600_000);
    expect(run.code, run.output).toBe(0);
    expect(await installed()).toEqual(before);

    const project = path.join(cli.dir, "py");
    expect(fs.readFileSync(path.join(project, "Pulumi.yaml"), "utf8")).toMatch(/options:\s+virtualenv: venv/);
    const venvPython = path.join(project, "venv", "bin", "python");
    const { stdout } = await exec(venvPython, ["-c", "import pulumi, sys; print(sys.prefix)"]);
    expect(stdout.trim()).toBe(path.join(project, "venv"));
    // Unpublished on PyPI: a bare name there would install whatever someone else published under it.
    const requirements = fs.readFileSync(path.join(project, "requirements.txt"), "utf8");
    expect(requirements).not.toMatch(/^\s*pulumi[_-]proxy\s*(?:[=<>~!].*)?$/m);
    expect(requirements).toMatch(/^# pulumi_proxy is not on PyPI: install its release's wheel/m);
  });
});
