import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { REPO_ROOT } from "../support/pulumi";

/**
 * The provider processes and the programs that the project's launcher and language host start, and
 * the pulumi-proxy command, defer @pulumi/pulumi's `typescript`, `@npmcli/arborist`, Automation API
 * and tracing SDK: each loads at its first use, and what uses it gets the same answers. The probe
 * requires the program harness's tracing.js as the harness does, then uses each.
 */
const PROBE = `
  const { types } = require("node:util");
  const real = (pattern) =>
    Object.entries(require.cache).some(([file, module]) => pattern.test(file) && !types.isProxy(module.exports));
  const loaded = () => ({
    typescript: real(/node_modules\\/typescript\\/lib\\/typescript\\.js$/),
    arborist: real(/@npmcli\\/arborist\\/lib\\/index\\.js$/),
    normalize: real(/normalize-package-data\\/lib\\/normalize\\.js$/),
    automation: real(/@pulumi\\/pulumi\\/automation\\/index\\.js$/),
    tracingSdk: real(/@opentelemetry\\/sdk-trace-node\\/build\\/src\\/index\\.js$/),
  });
  const pulumi = require("@pulumi/pulumi");
  const tracing = require("@pulumi/pulumi/cmd/run/tracing");
  const before = loaded();
  pulumi.runtime.serializeFunction(() => 42).then(async (serialized) => {
    const paths = await pulumi.runtime.computeCodePaths();
    // Spans go to a closed loopback port: starting the tracer is what needs the SDK.
    tracing.start("http://127.0.0.1:1/api/v2/spans");
    const answers = {
      serialized: serialized.text.includes("42"),
      codePaths: paths instanceof Map,
      automation: typeof pulumi.automation.LocalWorkspace.create === "function",
      tracing: typeof tracing.newSpan("probe").end === "function",
    };
    console.log(JSON.stringify({ before, answers, after: loaded() }));
  });
`;

// In the repository (the probe resolves @pulumi/pulumi from there); a fresh clone has no .pulumi-proxy/ yet.
fs.mkdirSync(path.join(REPO_ROOT, ".pulumi-proxy"), { recursive: true });
const probeDir = fs.mkdtempSync(path.join(REPO_ROOT, ".pulumi-proxy", "defer-probe-"));
afterAll(() => fs.rmSync(probeDir, { recursive: true, force: true }));

function run(args: string[]): unknown {
  return JSON.parse(execFileSync(process.execPath, args, { cwd: REPO_ROOT, encoding: "utf8" }));
}

describe("the deferred modules of @pulumi/pulumi", () => {
  const helper = path.join(inject("pulumiBinDir"), "pulumi-proxy-defer-modules.cjs");
  const expected = {
    before: { typescript: false, arborist: false, normalize: false, automation: false, tracingSdk: false },
    answers: { serialized: true, codePaths: true, automation: true, tracing: true },
    after: { typescript: true, arborist: true, normalize: true, automation: true, tracingSdk: true },
  };

  it("are deferred by the helper provisioning installs beside the launcher, as the launcher calls it", () => {
    expect(fs.readFileSync(helper, "utf8")).toBe(
      fs.readFileSync(path.join(REPO_ROOT, "provider", "process", "defer-modules.cjs"), "utf8"),
    );
    const call = `require(${JSON.stringify(helper)}).deferPulumiModules(require.resolve("@pulumi/pulumi"));`;
    expect(run(["-e", call + PROBE])).toEqual(expected);
  });

  it("are deferred when it is preloaded, as the language host runs programs", () => {
    const program = path.join(probeDir, "program.cjs");
    fs.writeFileSync(program, PROBE);
    expect(run(["--require", helper, program])).toEqual(expected);
  });

  it("are deferred through the package's own export, as the native plugin calls it at its start", () => {
    expect(require.resolve("pulumi-proxy/defer-modules")).toBe(
      path.join(REPO_ROOT, "provider", "process", "defer-modules.cjs"),
    );
    const call = `require("pulumi-proxy/defer-modules").deferPulumiModules(require.resolve("@pulumi/pulumi"));`;
    expect(run(["-e", call + PROBE])).toEqual(expected);
    const plugin = fs.readFileSync(path.join(REPO_ROOT, "provider", "native", "main.ts"), "utf8");
    expect(plugin).toContain('require("pulumi-proxy/defer-modules")');
    expect(plugin).toContain('deferPulumiModules(require.resolve("@pulumi/pulumi"));');
  });

  it("are deferred by the pulumi-proxy command before its imports load @pulumi/pulumi", () => {
    // The built command's module, loaded first, as its bin starts it; the probe then finds the stand-ins.
    const call = `require(${JSON.stringify(path.join(REPO_ROOT, "dist", "cli", "main.js"))});`;
    expect(run(["-e", call + PROBE])).toEqual(expected);
  });

  it("load at once without it, which is what the deferral saves", () => {
    const before = (run(["-e", PROBE]) as typeof expected).before;
    expect(before).toEqual({ typescript: true, arborist: true, normalize: true, automation: true, tracingSdk: true });
  });
});

describe("undici, the SDK's HTTP client", () => {
  it("loads at the first request, not with the package a program or provider requires", () => {
    // A closed loopback port: the request fails at once, after undici has loaded to send it.
    const probe = `
      const loaded = () => Object.keys(require.cache).some((file) => /node_modules\\/undici\\/index\\.js$/.test(file));
      const proxy = require("pulumi-proxy");
      require("pulumi-proxy/runtime");
      const before = loaded() || typeof proxy.ProxyUser !== "function";
      const { ProxyClient } = require("pulumi-proxy/sdk");
      const client = new ProxyClient({ baseUrl: "http://127.0.0.1:1", apiKey: "live_probe", maxRetries: 0 });
      client.proxyUsers.list().all().then(
        () => console.log(JSON.stringify({ before, failed: false, after: loaded() })),
        (error) => console.log(JSON.stringify({ before, failed: error.constructor.name, after: loaded() })),
      );
    `;
    expect(run(["-e", probe])).toEqual({ before: false, failed: "ConnectionError", after: true });
  });
});
