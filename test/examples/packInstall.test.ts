import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import * as native from "pulumi-proxy/native";
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { copyExample, npm, outsideFolder } from "../support/outside";
import { createTestStack, REPO_ROOT, type TestStack } from "../support/pulumi";
import { atRelease, releaseBlocks } from "../support/readmeBlocks";
import { packedTarball } from "../support/tarball";

const exec = promisify(execFile);
type Output = { value: unknown; secret: boolean };
const value = <T>(outputs: Record<string, Output>, key: string) => outputs[key]?.value as T;

/**
 * A TypeScript program on the native SDK the package ships, a second project in the same installed
 * folder. No TypeScript is installed, so the run harness type-checks with the compiler @pulumi/pulumi
 * vendors, whose module resolution predates package exports (the package's typesVersions answer it).
 */
const NATIVE_PROGRAM = `import * as proxy from "pulumi-proxy/native";

const user = new proxy.ProxyUser("scraper", { name: "scraper", limits: { dailyGb: 2 } });
export const userId = user.proxyUserId;
`;

/**
 * What the README's Install section tells a user outside this repository to do: pack, install the
 * tarball into a folder of their own, copy an example there, and run it; then a program on the
 * native provider, in the same folder, with the plugin put in place by the one documented command.
 * One install for both: `npm install` of the package and @pulumi/pulumi is 12 s of CPU.
 */
describe("installed from a tarball, outside the repository", () => {
  const outside = outsideFolder();
  const app = path.join(outside.dir, "app");
  let server: ReferenceServer;
  let harness: TestStack;

  beforeAll(async () => {
    const tarball = await packedTarball();
    copyExample("quickstart", app);
    // The README's Node.js install block, from the packed tarball's folder instead of a release's URL.
    const block = releaseBlocks(path.join(REPO_ROOT, "README.md")).get("nodejs");
    expect(block, "README.md's <!-- readme:release nodejs --> block").toMatch(/^npm install /);
    const args = atRelease(block ?? "", `${path.dirname(tarball)}/`)
      .split(/\s+/)
      .slice(1);
    await npm(args, app);
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    // No config at all: the credentials come only from the environment.
    harness = await createTestStack({
      workDir: app,
      envVars: { PROXY_API_URL: server.url, PROXY_API_KEY: server.rootKey },
    });
  });
  afterAll(async () => {
    await harness?.cleanup();
    await server?.close();
    outside.cleanup();
  });

  it("the tarball holds the built package, and its command runs", async () => {
    const installed = path.join(app, "node_modules", "pulumi-proxy");
    expect(fs.realpathSync(installed).startsWith(outside.dir)).toBe(true);
    const shipped = ["dist/provider/index.js", "dist/provider/runtime.js", "dist/cli/main.js", "LICENSE"];
    // The native provider's SDKs: Node's compiled, Python's wheel, Go's module.
    shipped.push("dist/native-sdk/nodejs/index.js", "dist/native-sdk/go/go.mod");
    shipped.push(`dist/native-sdk/python/pulumi_proxy-${require("../../package.json").version}-py3-none-any.whl`);
    for (const file of shipped) {
      expect(fs.existsSync(path.join(installed, file)), file).toBe(true);
    }
    // prepack builds without source maps, whose .ts files do not ship, and prepare must not build again with them.
    const maps = (fs.readdirSync(path.join(installed, "dist"), { recursive: true }) as string[]).filter((file) =>
      file.endsWith(".map"),
    );
    expect(maps).toEqual([]);
    // The package's `prepare` names a script it ships, which has nothing to build there.
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8"));
    expect(manifest.scripts.prepare).toBe("node tools/build.mjs");
    const prepare = spawnSync(process.execPath, ["tools/build.mjs"], { cwd: installed, encoding: "utf8" });
    expect(prepare.status, prepare.stderr).toBe(0);
    expect(prepare.stderr).toBe("");
    const saved = JSON.parse(fs.readFileSync(path.join(app, "package.json"), "utf8")).dependencies;
    expect(saved["@pulumi/pulumi"]).toBe("3.248.0");
    const version = JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8")).version;
    expect(await npm(["exec", "--", "pulumi-proxy", "--version"], app)).toBe(`pulumi-proxy ${version}\n`);
  });

  it("the copied quickstart, configured only by PROXY_API_URL and PROXY_API_KEY, comes up with one of each resource, previews clean and is destroyed", async () => {
    // A local program, so the language host hands the Node runtime the (empty) config: an object, not null.
    expect(await harness.stack.getAllConfig()).toEqual({});
    expect((await harness.stack.preview()).changeSummary).toEqual({ create: 4 });
    // That preview type-checked the program against the tarball's types; the runs after it need not
    // again (ts-node's check costs 3.5 s of CPU a run).
    harness.stack.workspace.envVars.PULUMI_NODEJS_TRANSPILE_ONLY = "true";

    const up = await harness.stack.up();
    expect(up.summary.resourceChanges).toEqual({ create: 4 });
    const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });

    const user = value<{ id: string; username: string; enabled: boolean }>(up.outputs, "proxyUser");
    expect(user).toMatchObject({ username: "quickstart-scraper", enabled: true });
    expect(await api.proxyUsers.get(user.id)).toMatchObject({
      limits: { daily_gb: 5, monthly_gb: 100 },
      enabled: true,
    });
    expect(up.outputs.proxyUserPassword?.secret).toBe(true);
    expect(up.outputs.apiKeySecret?.secret).toBe(true);
    const hint = value<{ secretHint: string }>(up.outputs, "apiKey").secretHint;
    expect(value<string>(up.outputs, "apiKeySecret").endsWith(hint)).toBe(true);
    expect(value<{ city: string }>(up.outputs, "ip")).toMatchObject({ city: "new york", health: "good" });
    expect(server.control.snapshot().ips).toHaveLength(1);

    expect((await harness.stack.preview()).changeSummary).toEqual({ same: 4 });
    await harness.stack.destroy();
    const held = server.control.snapshot();
    expect(held).toMatchObject({ proxyUsers: [], ips: [] });
    expect(held.keys.map((key) => (key as { name: string }).name)).toEqual(["root"]);
  });

  it("a TypeScript program on the native SDK runs after `npx pulumi-proxy provider install`, with no download and no change to PATH; npx's PATH stays out of the CLI's engines", async () => {
    const project = path.join(app, "native");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: native-app\nruntime: nodejs\n");
    fs.writeFileSync(path.join(project, "index.ts"), NATIVE_PROGRAM);
    const server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    // Nothing of the repository on PATH or in node_modules, and plugins on PATH ignored: the engine
    // can only run the plugin the command puts in the plugin cache.
    const harness = await createTestStack({
      workDir: project,
      config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
      envVars: { PULUMI_IGNORE_AMBIENT_PLUGINS: "true" },
    });
    onTestFinished(async () => {
      await harness.cleanup();
      await server.close();
    });
    // PATH as a user's: pulumi and node, nothing of this repository.
    const userPath = [inject("pulumiBinDir"), path.dirname(process.execPath), "/usr/bin", "/bin"].join(path.delimiter);
    const env = { ...process.env, PULUMI_HOME: harness.envVars.PULUMI_HOME, PATH: userPath };
    const installed = await exec("npx", ["--no", "pulumi-proxy", "provider", "install"], { cwd: project, env });
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
      exec("npx", ["--no", "pulumi-proxy", ...args, "--stack", harness.stackName], { cwd: project, env: userEnv });
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

  // No destroy at the end: the server, and with it the stack's objects, is discarded.
  it("`provider install` from the project leaves a plugin that outlives the project", async () => {
    // Another stack on the machine, whose program is not in the project, on the native provider.
    const other = await createTestStack({
      program: async () => {
        const user = new native.ProxyUser("survivor", { name: "survivor" });
        return { userId: user.proxyUserId };
      },
      config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
      envVars: { PULUMI_IGNORE_AMBIENT_PLUGINS: "true" },
    });
    const env = { ...process.env, PULUMI_HOME: other.envVars.PULUMI_HOME };
    await exec("npx", ["pulumi-proxy", "provider", "install"], { cwd: app, env });
    fs.rmSync(app, { recursive: true, force: true });
    try {
      const up = await other.stack.up();
      expect(up.summary.resourceChanges).toEqual({ create: 2 });
      const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
      expect(await api.proxyUsers.get(up.outputs.userId?.value as string)).toMatchObject({ name: "survivor" });
    } finally {
      await other.cleanup();
    }
  });
});
