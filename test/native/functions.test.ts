import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { basic, startOrigin, viaGateway } from "../gateway/harness";
import { pipSettings } from "../support/machineCaches";
import { REPO_ROOT } from "../support/pulumi";
import { type CliWorkspace, cliWorkspace, processesMarked, pulumi, startPulumi } from "../support/pulumiCli";
import { GO_PROGRAM, NODE_PROGRAM, PYTHON_PROGRAM, RUNAWAY_PYTHON, YAML_PROGRAM } from "./readPrograms";

const exec = promisify(execFile);
const MAIN = path.join(REPO_ROOT, "dist", "cli", "main.js");
const PINNED = require("../../package.json").dependencies["@pulumi/pulumi"] as string;
const RSS_BOUND_MB = 1024;
const BOUND_MS = 120_000;

function residentMb(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0; // ended meanwhile
  }
}

/**
 * Every function of the plugin (`Invoke`) from a YAML, a Python, a Go and a Node program, through the
 * real CLI, against one reference server: each lookup returns the id the API holds, usage and charges
 * are the server's figures for traffic sent through its gateway, a lookup fed an output unknown at
 * preview waits for it, and a missing name or scope fails the preview naming it.
 */
describe("the functions through the native provider, in every language", () => {
  let server: ReferenceServer;
  let api: ProxyClient;
  let workspace: CliWorkspace;
  let env: NodeJS.ProcessEnv;
  const today = new Date().toISOString().slice(0, 10);
  const expected = { legacyId: "", allocationId: "", address: "", bytes: 0, requests: 0 };
  let narrowKey = "";

  beforeAll(async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    workspace = cliWorkspace();
    env = { ...workspace.env, PULUMI_IGNORE_AMBIENT_PLUGINS: "true" };
    // As a user would: the documented command puts the plugin where the engine finds it.
    await exec(process.execPath, [MAIN, "provider", "install"], { env });
    const legacy = await api.proxyUsers.create({ name: "legacy" });
    const allocation = await api.ips.allocate({ product: "isp", country: "us" });
    const origin = await startOrigin();
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await viaGateway(server.gatewayUrl, `${origin.url}/hello`, basic("legacy", legacy.password));
        expect(answer.status).toBe(200);
      }
    } finally {
      await origin.close();
    }
    const usage = await api.usage.get({ from: today, to: today, proxy_user_id: legacy.id });
    Object.assign(expected, {
      legacyId: legacy.id,
      allocationId: allocation.id,
      address: allocation.ip,
      bytes: usage.totals.bytes,
      requests: usage.totals.requests,
    });
    narrowKey = server.control.createKey({ name: "no-billing", scopes: ["usage:read", "proxy-users:read"] }).secret;
  }, 120_000);
  afterAll(async () => {
    workspace?.cleanup();
    await server?.close();
  });

  const run = async (dir: string, args: string[]) => pulumi([...args, "--stack", "dev"], dir, env, 600_000);
  /** One `config set-all` for the lot: each CLI call costs a start, and a secret the passphrase's key derivation. */
  const config = async (dir: string, plain: Record<string, string>, secret: Record<string, string> = {}) => {
    const pairs = (flag: string, values: Record<string, string>) =>
      Object.entries(values).flatMap(([key, value]) => [flag, `${key}=${value}`]);
    const set = await run(dir, ["config", "set-all", ...pairs("--plaintext", plain), ...pairs("--secret", secret)]);
    expect(set.code, set.output).toBe(0);
  };

  /** Creates the stack, checks the preview (the fresh user's username unknown), runs up, and checks every read. */
  async function readsAsTheApiHolds(dir: string): Promise<void> {
    expect((await pulumi(["stack", "init", "dev"], dir, env)).code).toBe(0);
    await config(
      dir,
      { "proxy:apiUrl": server.url, lookupName: "legacy", address: expected.address, today },
      { "proxy:apiKey": server.rootKey },
    );
    const preview = await run(dir, ["preview"]);
    expect(preview.code, preview.output).toBe(0);
    const up = await run(dir, ["up", "--yes", "--skip-preview"]);
    expect(up.code, up.output).toBe(0);
    const shown = await run(dir, ["stack", "output", "--json"]);
    const outputs = JSON.parse(shown.output.slice(shown.output.indexOf("{")));
    expect(outputs).toMatchObject({
      legacyId: expected.legacyId,
      usageBytes: expected.bytes,
      usageRequests: 3,
      balanceCents: 10_000 - 300,
      chargesTotalCents: 300,
      allocationId: expected.allocationId,
    });
    expect(outputs.freshId).toMatch(/^pu_/);
    expect(outputs.freshLookupId).toBe(outputs.freshId);
    // A plain call runs when the program does, before the fresh user exists: the legacy one is there.
    expect(outputs.users.map((user: { id: string }) => user.id)).toContain(expected.legacyId);
    expect(outputs.allocations.map((found: { id: string }) => found.id)).toEqual([expected.allocationId]);
  }

  /** A name nobody holds, then a key without billing:read: each fails the preview, naming what is missing. */
  async function failuresNamed(dir: string): Promise<void> {
    await config(dir, { lookupName: "ghost" });
    const missing = await run(dir, ["preview"]);
    expect(missing.code).not.toBe(0);
    expect(missing.output).toContain(
      `lookupProxyUser: cannot look up a proxy user: no proxy user is named "ghost" on the account of the key in proxy:apiKey at ${server.url}`,
    );
    await config(dir, { lookupName: "legacy" }, { "proxy:apiKey": narrowKey });
    const unscoped = await run(dir, ["preview"]);
    expect(unscoped.code).not.toBe(0);
    expect(unscoped.output).toMatch(
      /get(Balance|Charges): cannot (read the balance|list charges): the API key in proxy:apiKey lacks billing:read/,
    );
    for (const secret of [narrowKey, server.rootKey]) expect(unscoped.output).not.toContain(secret);
  }

  it("from YAML (fn::invoke)", async () => {
    const dir = workspace.project("reads-yaml", { "Pulumi.yaml": YAML_PROGRAM("reads-yaml") }, { nodeModules: false });
    await readsAsTheApiHolds(dir);
    await failuresNamed(dir);
  }, 400_000);

  it("from Node, through the native SDK (plain and output forms)", async () => {
    const dir = workspace.project("reads-node", {
      "Pulumi.yaml": "name: reads-node\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
      "package.json": JSON.stringify({ name: "reads-node", main: "index.js" }),
      "index.js": NODE_PROGRAM,
    });
    await readsAsTheApiHolds(dir);
    await failuresNamed(dir);
  }, 400_000);

  it("from Python (pulumi_proxy, plain and output forms)", async () => {
    const dir = workspace.project(
      "reads-python",
      {
        "Pulumi.yaml": "name: reads-python\nruntime:\n  name: python\n  options:\n    virtualenv: venv\n",
        "__main__.py": PYTHON_PROGRAM,
      },
      { nodeModules: false },
    );
    const wheel = (await exec(process.execPath, [MAIN, "sdk", "python"])).stdout.trim();
    await exec("python3", ["-m", "venv", path.join(dir, "venv")]);
    await exec(path.join(dir, "venv", "bin", "pip"), ["install", "--quiet", `pulumi==${PINNED}`, wheel], {
      env: { ...process.env, ...pipSettings() },
      timeout: 300_000,
    });
    await readsAsTheApiHolds(dir);
    await failuresNamed(dir);

    // The runaway-memory program of test/provider/runawayMemory.test.ts, natively: a failed lookup's
    // only use is getUsage's argument. It fails the preview naming the user, in bounded memory.
    const runaway = workspace.project(
      "runaway-python",
      {
        "Pulumi.yaml":
          "name: runaway-python\nruntime:\n  name: python\n  options:\n    virtualenv: ../reads-python/venv\n",
        "__main__.py": RUNAWAY_PYTHON,
      },
      { nodeModules: false },
    );
    expect((await pulumi(["stack", "init", "dev"], runaway, env)).code).toBe(0);
    await config(runaway, { "proxy:apiUrl": server.url }, { "proxy:apiKey": server.rootKey });
    const bounded = await boundedPreview(runaway);
    expect(bounded.peakMb, bounded.output).toBeLessThan(RSS_BOUND_MB);
    expect(bounded.code, bounded.output).not.toBe(0);
    expect(bounded.output).toContain('no proxy user is named "no-such-user-here"');
  }, 600_000);

  /** `pulumi preview` in `dir`, killed once any process it started passes RSS_BOUND_MB or BOUND_MS. */
  async function boundedPreview(dir: string): Promise<{ code: number | null; output: string; peakMb: number }> {
    const started = Date.now();
    const child = startPulumi(["preview", "--stack", "dev"], dir, env);
    let peakMb = 0;
    const watch = setInterval(() => {
      for (const { pid } of processesMarked(workspace.marker)) peakMb = Math.max(peakMb, residentMb(pid));
      if ((peakMb > RSS_BOUND_MB || Date.now() - started > BOUND_MS) && child.pid !== undefined) {
        process.kill(-child.pid, "SIGKILL");
      }
    }, 100);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearInterval(watch);
    return { code, output: child.output(), peakMb };
  }

  it("from Go (plain and output forms)", async () => {
    const sdkDir = (await exec(process.execPath, [MAIN, "sdk", "go"])).stdout.trim();
    const dir = workspace.project(
      "reads-go",
      {
        "Pulumi.yaml": "name: reads-go\nruntime: go\n",
        "go.mod": `module example.com/reads-go\n\ngo 1.25\n\nrequire example.com/pulumi-proxy/sdk/go v0.1.0\n\nreplace example.com/pulumi-proxy/sdk/go => ${sdkDir}\n`,
        "main.go": GO_PROGRAM,
      },
      { nodeModules: false },
    );
    // The module proxy serves these versions, but this network's checksum database has no entries for them.
    env.GOFLAGS = "-mod=mod";
    env.GONOSUMDB = [process.env.GONOSUMDB, "github.com/pulumi/pulumi"].filter(Boolean).join(",");
    // Built once, and run by the host as Pulumi.yaml's `binary`: the four engine runs below would each
    // build and link it again (seconds of CPU each). The release test builds a Go program through the host.
    await exec("go", ["build", "-o", "reads-go", "."], { cwd: dir, env, timeout: 600_000 });
    fs.writeFileSync(
      path.join(dir, "Pulumi.yaml"),
      "name: reads-go\nruntime:\n  name: go\n  options:\n    binary: ./reads-go\n",
    );
    await readsAsTheApiHolds(dir);
    await failuresNamed(dir);
    expect(fs.existsSync(path.join(dir, "go.sum"))).toBe(true);
  }, 900_000);
});
