import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { npm, outsideFolder } from "../support/outside";
import { createTestStack, type TestStack } from "../support/pulumi";
import { packedTarball } from "../support/tarball";

const exec = promisify(execFile);

/**
 * A TypeScript program of a user who has only the installed package: the generated SDK it ships. No
 * TypeScript is installed, so the run harness type-checks with the compiler @pulumi/pulumi vendors,
 * whose module resolution predates package exports (the package's typesVersions answer it).
 */
const PROGRAM = `import * as proxy from "pulumi-proxy/native";

const user = new proxy.ProxyUser("scraper", { name: "scraper", limits: { dailyGb: 2 } });
export const userId = user.proxyUserId;
`;

/**
 * The user's folder: the program, and the tarball installed beside `@pulumi/pulumi`. The tarball is
 * the suite's one pack of a clean copy of the working tree (support/tarball.ts), as the other
 * install tests use.
 */
async function userProgram(outsideDir: string): Promise<string> {
  const tarball = await packedTarball();
  const dir = path.join(outsideDir, "app");
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: native-app\nruntime: nodejs\n");
  fs.writeFileSync(path.join(dir, "index.ts"), PROGRAM);
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "native-app", private: true }));
  await npm(["install", tarball, "@pulumi/pulumi@3.248.0"], dir);
  return dir;
}

/**
 * Where a user starts: the packed tarball installed in a folder of their own, the one documented
 * command, and a program. Nothing of the repository is on PATH or in node_modules, and the engine
 * ignores plugins on PATH, so it can only run the plugin the command put in the plugin cache.
 */
describe("the native provider, installed from the tarball outside the repository", () => {
  const outside = outsideFolder();
  let app = "";
  let user: { server: ReferenceServer; harness: TestStack } | undefined;

  beforeAll(async () => {
    app = await userProgram(outside.dir);
    const server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    const harness = await createTestStack({
      workDir: app,
      config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
      envVars: { PULUMI_IGNORE_AMBIENT_PLUGINS: "true" },
    });
    user = { server, harness };
  });
  afterAll(async () => {
    await user?.harness.cleanup();
    await user?.server.close();
    outside.cleanup();
  });

  it("runs after `npx pulumi-proxy provider install`, with no download and no change to PATH; npx's PATH stays out of the CLI's engines", async () => {
    if (!user) throw new Error("the user's folder was not set up");
    const { server, harness } = user;
    // PATH as a user's: pulumi and node, nothing of this repository.
    const userPath = [inject("pulumiBinDir"), path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter);
    const env = { ...process.env, PULUMI_HOME: harness.envVars.PULUMI_HOME, PATH: userPath };
    const installed = await exec("npx", ["--no", "pulumi-proxy", "provider", "install"], { cwd: app, env });
    expect(installed.stdout).toContain(path.join(harness.envVars.PULUMI_HOME ?? "", "plugins", "resource-proxy-v"));

    const result = await harness.stack.up();
    const userId = String(result.outputs.userId?.value);
    const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    expect(await api.proxyUsers.get(userId)).toMatchObject({ name: "scraper", limits: { daily_gb: 2 } });
    // That up type-checked the program with the vendored compiler; the runs after it need not again
    // (ts-node's check costs 3.5 s of CPU a run).
    harness.stack.workspace.envVars.PULUMI_NODEJS_TRANSPILE_ONLY = "true";
    expect((await harness.stack.preview()).changeSummary).toEqual({ same: 2 });

    // The user's own environment (plugins on PATH not ignored): `npx` puts the package's
    // node_modules/.bin, which holds `pulumi-resource-proxy`, on PATH. The engines the commands start
    // must not see it there: they run the plugin the install put in the cache, without a warning.
    const { PULUMI_IGNORE_AMBIENT_PLUGINS: _ignored, ...stackEnv } = harness.envVars;
    const userEnv = { ...process.env, ...stackEnv, PATH: userPath, PULUMI_NODEJS_TRANSPILE_ONLY: "true" };
    const npx = (args: string[]) =>
      exec("npx", ["--no", "pulumi-proxy", ...args, "--stack", harness.stackName], { cwd: app, env: userEnv });
    const recovered = await npx(["recover", "--up"]);
    expect(recovered.stdout).toContain("ran `pulumi up`");
    expect(`${recovered.stdout}${recovered.stderr}`).not.toMatch(/pulumi-resource-proxy from \$PATH/);
    expect((await npx(["drift"])).stdout).toContain("No drift");

    // The code `pulumi import --out imported.ts` writes for this package, type-checked in a program,
    // is test/release/codeFromRelease.ts's (on the release's package); import --file with --out is
    // test/native/coverage.test.ts's.
    await harness.stack.destroy();
    const left = [];
    for await (const user of api.proxyUsers.list()) left.push(user.id);
    expect(left).toEqual([]);
  });
});
