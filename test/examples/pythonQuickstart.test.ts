import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { outsideFolder } from "../support/outside";
import { createTestStack, REPO_ROOT, type TestStack } from "../support/pulumi";

const exec = promisify(execFile);
const MAIN = path.join(REPO_ROOT, "dist", "cli", "main.js");

/**
 * examples/python-quickstart as its README runs it: a copy of the folder, `pulumi install` (the
 * project's Python language host makes the virtual environment Pulumi.yaml names), the wheel the
 * package ships, the plugin, then the real CLI and pulumi-proxy's own commands on the stack.
 */
describe("examples/python-quickstart through the Pulumi CLI", () => {
  const outside = outsideFolder();
  const app = path.join(outside.dir, "python-quickstart");
  let server: ReferenceServer;
  let harness: TestStack;
  let api: ProxyClient;
  let userId = "";

  const env = () => ({ ...process.env, ...harness.envVars, PATH: `${inject("pulumiBinDir")}:${process.env.PATH}` });
  const pulumi = (args: string[], stack = ["--stack", harness.stackName]) =>
    exec("pulumi", [...args, ...stack, "--non-interactive"], { cwd: app, env: env() });
  const proxyCli = (args: string[]) => exec(process.execPath, [MAIN, ...args], { cwd: app, env: env() });
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
    harness = await createTestStack({
      workDir: app,
      config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
      envVars: { PULUMI_IGNORE_AMBIENT_PLUGINS: "true" },
    });
    await pulumi(["install"], []);
    const wheel = (await proxyCli(["sdk", "python"])).stdout.trim();
    await exec(path.join(app, "venv", "bin", "pip"), ["install", "--quiet", wheel], { cwd: app });
    await proxyCli(["provider", "install"]);
  });
  afterAll(async () => {
    await harness?.cleanup();
    await server?.close();
    outside.cleanup();
  });

  it("creates the quickstart's user, key and address from Python, secrets as secrets", async () => {
    const result = await harness.stack.up();
    const user = result.outputs.proxyUser?.value as { id: string; limits: Record<string, number> };
    userId = user.id;
    expect(await api.proxyUsers.get(userId)).toMatchObject({
      name: "quickstart-scraper",
      limits: { daily_gb: 5, monthly_gb: 100 },
    });
    expect(result.outputs.apiKeySecret?.secret).toBe(true);
    expect(result.outputs.proxyUserPassword?.secret).toBe(true);
    expect(result.outputs.ip?.value).toMatchObject({ city: "new york", health: "good" });
    expect((await harness.stack.preview({ expectNoChanges: true })).changeSummary).toEqual({ same: 4 });
  });

  it("shows an out-of-band change in preview --refresh --diff, drift and plan", async () => {
    await api.proxyUsers.update(userId, { limits: { daily_gb: 9, monthly_gb: 100 } });
    const { stdout } = await pulumi(["preview", "--refresh", "--diff"]);
    expect(stdout).toMatch(/~ proxy:index:ProxyUser: \(update\)[\s\S]*~ dailyGb\s*: 9 => 5/);
    expect((await settled(pulumi(["preview", "--refresh", "--expect-no-changes"]))).code).not.toBe(0);

    const drift = await settled(proxyCli(["drift", "--stack", harness.stackName]));
    expect(drift.code).toBe(2);
    expect(drift.stdout).toMatch(/scraper \(proxy:index:ProxyUser\)\s+limits\.dailyGb\s+5 → 9\s+update/);
    const plan = await settled(proxyCli(["plan", "--stack", harness.stackName, "--refresh"]));
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
    expect((await harness.stack.preview({ expectNoChanges: true })).changeSummary).toEqual({ same: 5 });
  });

  it("destroys everything it manages", async () => {
    await harness.stack.destroy();
    const left = [];
    for await (const user of api.proxyUsers.list()) left.push(user.name);
    for await (const key of api.keys.list()) left.push(key.name);
    expect(left.filter((name) => name !== "root")).toEqual([]);
  });
});
