import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/pulumi";
import { type CliWorkspace, cliWorkspace, processesMarked, pulumi, startPulumi } from "../support/pulumiCli";

/**
 * `pulumi up` killed outright (SIGKILL: no chance to clean up) while a resource is being created.
 * The language host, the program it runs and the dynamic provider are not the CLI's process group
 * and outlived it, the provider holding some 200 MB for ever. Now the host health-checks the engine
 * (tools/language-host/main.go) and so does the provider's launcher
 * (tools/language-host/dynamic-provider/), each about once a second, and so does the native plugin
 * (provider/process/engine-watch.cjs, shared with the launcher). The YAML host is upstream's,
 * run under ours (tools/language-host/yaml.go), whose watch stops it too.
 */
const LEFTOVERS_GONE_WITHIN_MS = 60_000;

const workspaces: CliWorkspace[] = [];
afterEach(() => {
  for (const workspace of workspaces.splice(0)) {
    // Whatever a failed run left behind (all started by this test) must not outlive it.
    for (const leftover of processesMarked(workspace.marker)) process.kill(leftover.pid, "SIGKILL");
    workspace.cleanup();
  }
});

/** A program whose dynamic provider writes a file when its create starts, and then takes ten minutes. */
function slowProgram(startedFile: string): Record<string, string> {
  return {
    "Pulumi.yaml": "name: slow-create\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
    "package.json": JSON.stringify({ name: "slow-create", main: "index.js" }),
    "index.js": `
const pulumi = require("@pulumi/pulumi");
const provider = {
  async create(inputs) {
    require("node:fs").writeFileSync(${JSON.stringify(startedFile)}, String(process.pid));
    await new Promise((resolve) => setTimeout(resolve, 600_000));
    return { id: "slow-1", outs: inputs };
  },
};
class Slow extends pulumi.dynamic.Resource {
  constructor(name, props) {
    super(provider, name, props);
  }
}
new Slow("sleeper", { size: 1 });
`,
  };
}

async function waitFor<T>(what: string, probe: () => T | undefined, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${withinMs / 1000} s`);
    await sleep(250);
  }
}

describe("`pulumi up` killed with SIGKILL during a create", () => {
  it("leaves no language host, program or provider process behind", async () => {
    const cli = cliWorkspace();
    workspaces.push(cli);
    const startedFile = path.join(cli.dir, "create-started");
    const dir = cli.project("program", slowProgram(startedFile));
    expect((await pulumi(["stack", "init", "dev"], dir, cli.env)).code).toBe(0);

    const up = startPulumi(["up", "--yes"], dir, cli.env);
    const exited = new Promise((resolve) => up.on("close", resolve));
    const providerPid = await waitFor(
      `the provider's create did not start:\n${up.output()}`,
      () => (fs.existsSync(startedFile) ? Number(fs.readFileSync(startedFile, "utf8")) : undefined),
      180_000,
    );
    const running = processesMarked(cli.marker);
    // The run is really in flight: the CLI, the language host, the program and the provider.
    expect(running.map((p) => p.pid)).toContain(providerPid);
    expect(running.some((p) => p.command.includes("pulumi-language-nodejs"))).toBe(true);
    expect(running.length, JSON.stringify(running)).toBeGreaterThanOrEqual(4);

    await killAndExpectNothingLeft(up, exited, cli.marker);
  });

  it("leaves no YAML host (ours or upstream's under it) or native plugin behind either, while a create waits on the API", async () => {
    const cli = cliWorkspace();
    workspaces.push(cli);
    // An API that takes the create's connection and never answers: the create is in flight for minutes.
    let connected: () => void = () => {};
    const createSent = new Promise<void>((resolve) => (connected = resolve));
    const stalled = net.createServer(() => connected());
    await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = stalled.address() as net.AddressInfo;
      const env = { ...cli.env, PROXY_API_URL: `http://127.0.0.1:${port}`, PROXY_API_KEY: "live_killed-engine-test" };
      execFileSync(process.execPath, [path.join(REPO_ROOT, "dist", "cli", "main.js"), "provider", "install"], { env });
      const dir = cli.project("native", {
        "Pulumi.yaml": [
          "name: native-create",
          "runtime: yaml",
          "resources:",
          "  waiting:",
          "    type: proxy:index:ProxyUser",
          "    properties:",
          "      name: waiting",
          "",
        ].join("\n"),
      });
      expect((await pulumi(["stack", "init", "dev"], dir, env)).code).toBe(0);

      const up = startPulumi(["up", "--yes", "--skip-preview"], dir, env);
      const exited = new Promise((resolve) => up.on("close", resolve));
      await createSent;
      const running = processesMarked(cli.marker);
      for (const part of [
        "/pulumi-resource-proxy",
        "bin/pulumi-language-yaml",
        "pulumi-yaml/v1.25.0/pulumi-language-yaml",
      ]) {
        expect(
          running.some((p) => p.command.includes(part)),
          `${part} in ${JSON.stringify(running)}`,
        ).toBe(true);
      }
      await killAndExpectNothingLeft(up, exited, cli.marker);
    } finally {
      stalled.close();
    }
  });
});

/** SIGKILLs the CLI, then waits up to a minute for every process it started to be gone. */
async function killAndExpectNothingLeft(up: ReturnType<typeof startPulumi>, exited: Promise<unknown>, marker: string) {
  process.kill(up.pid as number, "SIGKILL");
  await exited;
  const deadline = Date.now() + LEFTOVERS_GONE_WITHIN_MS;
  let left = processesMarked(marker);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(250);
    left = processesMarked(marker);
  }
  expect(left, `still running a minute after the kill: ${JSON.stringify(left, null, 2)}`).toEqual([]);
}
