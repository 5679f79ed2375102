import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { LocalWorkspace, PulumiCommand, type Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { sharedRelease } from "../release/releaseFolder";
import { machineCaches } from "../support/machineCaches";
import { pathWithoutNode } from "../support/nodeFree";
import { outsideFolder } from "../support/outside";
import { REPO_ROOT } from "../support/pulumi";
import { atRelease, blockWith, substitute } from "../support/readmeBlocks";
import { runShell } from "../support/shell";

const exec = promisify(execFile);

/** The README's "Run it" block, the one that installs and runs the program. */
function runItBlock(): string {
  return blockWith(path.join(REPO_ROOT, "examples", "python-quickstart", "README.md"), "pulumi stack init dev").script;
}

/**
 * examples/python-quickstart as its README runs it: a copy of the folder, then the README's block word
 * for word (the venv, the release's wheel, the release's plugin linked as the tool, a backend in the
 * folder, the stack, `pulumi up`) in a user's environment with no Node.js, against the suite's
 * release build, then the real CLI and the tool on the stack.
 */
describe("examples/python-quickstart through the Pulumi CLI", () => {
  const outside = outsideFolder();
  const app = path.join(outside.dir, "python-quickstart");
  /** The reader's own Pulumi home: their login and plugins. */
  const userHome = path.join(outside.dir, "pulumi-home");
  /** The reader's HOME: the README links the tool into its ~/.local/bin. */
  const home = path.join(outside.dir, "home");
  let server: ReferenceServer;
  let stack: Stack;
  let api: ProxyClient;
  let userId = "";
  /** Set once the folder exists (beforeAll): the commands' PATH, with no node on it. */
  let withoutNode = "";

  /** The shell the README's commands ran in, plus the backend its `export` set: no node on its PATH. */
  const env = () => {
    const { NODE_OPTIONS: _preload, ...rest } = process.env;
    return {
      ...rest,
      ...machineCaches(),
      HOME: home,
      PULUMI_HOME: userHome,
      PULUMI_CONFIG_PASSPHRASE: "python-quickstart",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      // What a user confirms with "yes" at `pulumi up`'s prompt.
      PULUMI_SKIP_CONFIRMATIONS: "true",
      PATH: withoutNode,
    };
  };
  const stackEnv = () => ({ ...env(), PULUMI_BACKEND_URL: `file://${app}` });
  const pulumi = (args: string[]) =>
    exec("pulumi", [...args, "--stack", "dev", "--non-interactive"], { cwd: app, env: stackEnv() });
  /** The tool as the README put it on PATH: the release's plugin executable. */
  const proxyCli = (args: string[]) => exec("pulumi-proxy", args, { cwd: app, env: stackEnv() });
  /** A command's output whatever its exit code, with the code. */
  const settled = async (run: Promise<{ stdout: string; stderr: string }>) =>
    run.then(
      (done) => ({ code: 0, ...done }),
      (failed: { code: number; stdout: string; stderr: string }) => failed,
    );

  beforeAll(async () => {
    fs.cpSync(path.join(REPO_ROOT, "examples", "python-quickstart"), app, {
      recursive: true,
      filter: (file) => !["venv", "__pycache__"].includes(path.basename(file)),
    });
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    fs.mkdirSync(home);
    withoutNode = pathWithoutNode(outside.dir, home);
    const release = await sharedRelease();
    const script = atRelease(substitute(runItBlock(), { url: server.url, key: server.rootKey }), release.baseUrl);
    const run = await runShell(["-euo", "pipefail"], script, app, env());
    if (run.code !== 0) throw new Error(`the README's block exited ${run.code}:\n${run.output.slice(-4_000)}`);
    stack = await LocalWorkspace.selectStack(
      { stackName: "dev", workDir: app },
      { envVars: stackEnv(), pulumiCommand: await PulumiCommand.get({ root: path.dirname(inject("pulumiBinDir")) }) },
    );
    // The first test file to ask for the release builds it; on a loaded machine that and the README's
    // installs take more than the default five minutes.
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    outside.cleanup();
  });

  it("leaves the venv and the stack's state in the folder, no Node.js file, and the reader's login alone", () => {
    for (const file of ["venv", ".pulumi/stacks"]) expect(fs.existsSync(path.join(app, file)), file).toBe(true);
    for (const file of ["package.json", "node_modules"]) expect(fs.existsSync(path.join(app, file)), file).toBe(false);
    // `pulumi login` (--local or any other) records the login in the Pulumi home for every later command.
    expect(fs.existsSync(path.join(userHome, "credentials.json"))).toBe(false);
  });

  it("created the quickstart's user, key and address from Python, secrets as secrets", async () => {
    const result = { outputs: await stack.outputs() };
    const user = result.outputs.proxyUser?.value as { id: string; limits: Record<string, number> };
    userId = user.id;
    expect(await api.proxyUsers.get(userId)).toMatchObject({
      name: "quickstart-scraper",
      limits: { daily_gb: 5, monthly_gb: 100 },
    });
    expect(result.outputs.apiKeySecret?.secret).toBe(true);
    expect(result.outputs.proxyUserPassword?.secret).toBe(true);
    expect(result.outputs.ip?.value).toMatchObject({ city: "new york", health: "good" });
    expect((await stack.preview({ expectNoChanges: true })).changeSummary).toEqual({ same: 4 });
  });

  it("shows an out-of-band change in preview --refresh --diff, drift and plan", async () => {
    await api.proxyUsers.update(userId, { limits: { daily_gb: 9, monthly_gb: 100 } });
    const { stdout } = await pulumi(["preview", "--refresh", "--diff"]);
    expect(stdout).toMatch(/~ proxy:index:ProxyUser: \(update\)[\s\S]*~ dailyGb\s*: 9 => 5/);
    expect((await settled(pulumi(["preview", "--refresh", "--expect-no-changes"]))).code).not.toBe(0);

    const drift = await settled(proxyCli(["drift", "--stack", "dev"]));
    expect(drift.code).toBe(2);
    expect(drift.stdout).toMatch(/scraper \(proxy:index:ProxyUser\)\s+limits\.dailyGb\s+5 → 9\s+update/);
    const plan = await settled(proxyCli(["plan", "--stack", "dev", "--refresh"]));
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain("quickstart-scraper daily ceiling LOWERED: 9 GB → 5 GB");
  });

  it("imports an existing user as Python code that previews clean", async () => {
    const legacy = await api.proxyUsers.create({ name: "legacy" });
    const out = path.join(app, "legacy.py");
    await pulumi(["import", "proxy:index:ProxyUser", "legacy", legacy.id, "--yes", "--protect=false", "--out", out]);
    const code = fs.readFileSync(out, "utf8");
    expect(code).toContain("import pulumi_proxy as proxy");
    expect(code).toMatch(/legacy = proxy\.ProxyUser\("legacy",[\s\S]*name="legacy"\)/);
    // The program takes the generated code as it is: its imports are the program's own.
    fs.appendFileSync(path.join(app, "__main__.py"), `\n${code}`);
    expect((await stack.preview({ expectNoChanges: true })).changeSummary).toEqual({ same: 5 });
  });

  it("destroys everything it manages", async () => {
    await stack.destroy();
    const left = [];
    for await (const user of api.proxyUsers.list()) left.push(user.name);
    for await (const key of api.keys.list()) left.push(key.name);
    expect(left.filter((name) => name !== "root")).toEqual([]);
  });
});
