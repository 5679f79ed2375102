import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { portPrintedWithBarePath } from "../native/plugin";
import { machineCaches, pipSettings } from "../support/machineCaches";
import { ownTmpDir } from "../support/nodeFree";
import { outsideFolder } from "../support/outside";
import { convertToPython, importWithTypeScript } from "./codeFromRelease";
import { credentialsConfig, INSTALL, installBlock, nodeFreePath, REGISTRY_ENV, runInstallBlock } from "./nodeFree";
import { sharedPythonVenv } from "./nodeFreePython";
import { arm64PluginServesAStack, eachPlatformExecutable, PLATFORM_NAMES } from "./platforms";
import { type ServedRelease, sharedRelease } from "./releaseFolder";
import { toolReviewsAStack } from "./tool";

const exec = promisify(execFile);
const PINNED_PULUMI = require("../../package.json").dependencies["@pulumi/pulumi"] as string;

/**
 * A program in one language as a user with no Node.js runs it: `prepare` writes it into `app`, and
 * `install` runs the README's Install block for the language as written (its release URL pointed at
 * the served folder), with the case's PATH. `tools` are the commands the block and the program need
 * on PATH (besides the Pulumi CLI and its language hosts); the program declares the user `userName`.
 */
interface LanguageCase {
  language: string;
  userName: string;
  tools: string[];
  /** More of the program's environment (Go's GOMODCACHE, GOFLAGS: HOME is the case's own folder). */
  env?: Record<string, string>;
  prepare(app: string, release: ServedRelease): Promise<void> | void;
  install?(app: string, release: ServedRelease, env: NodeJS.ProcessEnv): Promise<void>;
  /**
   * `pulumi import --out <file>` (relative to the program), and what the code it writes declares.
   * Python's import runs in test/examples/pythonQuickstart.test.ts, on the same release's wheel and plugin.
   */
  imported?: { file: string; declares: RegExp; adopt?(app: string): Promise<void> };
  /** How long the first `pulumi up` may take, when longer than the suite's test timeout. */
  firstUpTimeoutMs?: number;
}

/** The machine's caches, as a user's machine has them: Go's modules and builds, pip's downloads. */
const { GOMODCACHE = "", GOCACHE = "", GOPATH = "" } = machineCaches();
const GO_CACHES = { GOMODCACHE, GOCACHE, GOPATH };

const PYTHON: LanguageCase = {
  language: "python",
  userName: "nodefree-python",
  tools: ["python3"],
  env: pipSettings(),
  // The README's block made the venv once for this release (recovery.test.ts's programs share it).
  async prepare(app, release) {
    const venv = await sharedPythonVenv(release);
    fs.writeFileSync(
      path.join(app, "Pulumi.yaml"),
      `name: nodefree-python\nruntime:\n  name: python\n  options:\n    virtualenv: ${venv}\n`,
    );
    fs.writeFileSync(
      path.join(app, "__main__.py"),
      [
        "import pulumi",
        "import pulumi_proxy as proxy",
        "",
        'user = proxy.ProxyUser("scraper", name="nodefree-python", limits=proxy.ProxyUserLimitsArgs(daily_gb=5))',
        'pulumi.export("userId", user.proxy_user_id)',
        "# A function served by the plugin, fed an output unknown at preview.",
        'pulumi.export("foundId", proxy.lookup_proxy_user_output(name=user.username).id)',
        "",
      ].join("\n"),
    );
  },
};

const GOROOT = spawnSync("go", ["env", "GOROOT"], { encoding: "utf8" }).stdout.trim();

const GO: LanguageCase = {
  language: "go",
  userName: "nodefree-go",
  tools: ["go", "curl", "unzip"],
  env: { ...GO_CACHES, GOFLAGS: "-mod=mod", CGO_ENABLED: "0" },
  // On a new machine the first Go program compiles the Pulumi Go SDK into Go's build cache: past
  // five minutes on two cores that the suite's other files keep busy.
  firstUpTimeoutMs: 900_000,
  install: (app, release, env) => runInstallBlock("go", installBlock("go", release), app, env),
  prepare(app) {
    // The README's block makes the module (go mod init) and adds the SDK.
    fs.writeFileSync(path.join(app, "Pulumi.yaml"), "name: nodefree-go\nruntime: go\n");
    fs.writeFileSync(
      path.join(app, "main.go"),
      [
        "package main",
        "",
        "import (",
        '\t"example.com/pulumi-proxy/sdk/go/proxy"',
        '\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi"',
        ")",
        "",
        "func main() {",
        "\tpulumi.Run(func(ctx *pulumi.Context) error {",
        '\t\tuser, err := proxy.NewProxyUser(ctx, "scraper", &proxy.ProxyUserArgs{',
        '\t\t\tName:   pulumi.String("nodefree-go"),',
        "\t\t\tLimits: &proxy.ProxyUserLimitsArgs{DailyGb: pulumi.Float64(5)},",
        "\t\t})",
        "\t\tif err != nil {",
        "\t\t\treturn err",
        "\t\t}",
        '\t\tctx.Export("userId", user.ProxyUserId)',
        "\t\t// A function served by the plugin, fed an output unknown at preview.",
        '\t\tctx.Export("foundId", proxy.LookupProxyUserOutput(ctx, proxy.LookupProxyUserOutputArgs{Name: user.Username}).Id())',
        "\t\treturn nil",
        "\t})",
        "}",
        "",
      ].join("\n"),
    );
  },
  // A whole program of its own (package main, func main), which a user copies from: written beside
  // the program, it must be Go that parses.
  imported: {
    file: "../imported.go",
    declares:
      /^package main[\s\S]*"example\.com\/pulumi-proxy\/sdk\/go\/proxy"[\s\S]*proxy\.NewProxyUser\(ctx, "legacy"/,
    adopt: async (app) => {
      await exec(path.join(GOROOT, "bin", "gofmt"), ["-e", "-l", path.join(app, "..", "imported.go")]);
    },
  },
};

/** YAML needs no SDK: the README's block is the whole program, and its resource names the release. */
const YAML: LanguageCase = {
  language: "yaml",
  userName: "scraper",
  tools: [],
  prepare(app, release) {
    fs.writeFileSync(path.join(app, "Pulumi.yaml"), `${installBlock("yaml", release)}\n`);
  },
  imported: {
    file: "../imported.yaml",
    // YAML names the type by its short token (proxy:ProxyUser).
    declares: /resources:\s+legacy:\s+type: proxy:(?:index:)?ProxyUser\s+properties:[\s\S]*name: legacy-yaml/,
  },
};

const LANGUAGES: LanguageCase[] = [PYTHON, GO, YAML];

describe("the release folder (npm run release)", () => {
  const outside = outsideFolder();
  let release: ServedRelease;
  let server: ReferenceServer;
  let api: ProxyClient;

  beforeAll(async () => {
    release = await sharedRelease();
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    // The build (once per run, shared with the other release files) compiles five platforms' executables:
    // more than the suite's hook timeout on a busy machine.
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    outside.cleanup();
  });

  it("holds the plugin, the npm tarball, the wheel, the Go module and their checksums", async () => {
    const names = fs.readdirSync(release.dir).sort();
    expect(names).toEqual([
      "SHA256SUMS",
      `pulumi-proxy-${release.version}.tgz`,
      `pulumi-proxy-sdk-go-v${release.version}.zip`,
      ...PLATFORM_NAMES.map((platform) => `pulumi-resource-proxy-v${release.version}-${platform}.tar.gz`),
      `pulumi_proxy-${release.version}-py3-none-any.whl`,
    ]);
    await exec("sha256sum", ["--check", "--strict", "SHA256SUMS"], { cwd: release.dir });
    // Every SDK names where the engine gets the plugin; the Go module carries its go.sum.
    const unzip = (archive: string, member: string) => exec("unzip", ["-p", archive, member]);
    const wheelPlugin = JSON.parse((await unzip(release.file(".whl"), "pulumi_proxy/pulumi-plugin.json")).stdout);
    expect(wheelPlugin).toMatchObject({ name: "proxy", version: release.version, server: release.pluginDownloadURL });
    const goZip = release.file(".zip");
    expect((await unzip(goZip, "pulumi-proxy-sdk-go/proxy/pulumi-plugin.json")).stdout).toContain(
      release.pluginDownloadURL,
    );
    expect((await unzip(goZip, "pulumi-proxy-sdk-go/go.sum")).stdout).toContain("github.com/pulumi/pulumi/sdk/v3");
    const npmSdk = await exec("tar", ["-xzOf", release.file(".tgz"), "package/dist/native-sdk/nodejs/package.json"]);
    const nodeSdk = JSON.parse(npmSdk.stdout);
    expect(nodeSdk.pulumi).toMatchObject({ server: release.pluginDownloadURL });
    // The registry's metadata, which the generator carries from the schema into each SDK.
    const manifest = require("../../package.json");
    expect(nodeSdk).toMatchObject({
      license: manifest.license,
      homepage: release.repository,
      repository: release.repository,
      keywords: expect.arrayContaining(manifest.keywords),
    });
  });

  it("holds one plugin executable per platform, of that platform's format and architecture; macOS's signed ad hoc", async () => {
    await eachPlatformExecutable(release, path.join(outside.dir, "platforms"));
  });

  it("runs a stack's up with the linux-arm64 plugin, under qemu", async () => {
    // A server of its own: the user it creates is left there (no destroy under qemu), out of the
    // account whose every user the Python case's `coverage` counts.
    const arm64Server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    try {
      const arm64Api = new ProxyClient({ baseUrl: arm64Server.url, apiKey: arm64Server.rootKey });
      await arm64PluginServesAStack(release, arm64Server, arm64Api, path.join(outside.dir, "arm64"));
    } finally {
      await arm64Server.close();
    }
  });

  it("is what the README's install blocks name: this version, beside the engine SDK it was built with", () => {
    for (const [language, block] of INSTALL) {
      // A URL ends at a space or, in the YAML program's flow style, at its closing quote.
      for (const url of block.match(/https:\/\/downloads\.example\.com\/[^\s"]+/g) ?? []) {
        expect(url, `README.md's ${language} block`).toContain(`/v${release.version}/`);
        const file = url.split("/").pop();
        if (file) expect(fs.existsSync(path.join(release.dir, file)), `${language}: ${file}`).toBe(true);
      }
      if (/\bpulumi[=@]/.test(block))
        expect(block, language).toMatch(`pulumi${language === "python" ? "==" : "@"}${PINNED_PULUMI}`);
    }
    expect([...INSTALL.keys()].sort()).toEqual(["go", "nodejs", "plugin", "python", "yaml"]);
  });

  it("installs by the README's `pulumi plugin install --server` and with `--file`; the plugin starts with nothing on PATH", async () => {
    const pulumi = path.join(inject("pulumiBinDir"), "pulumi");
    const installedIn = async (home: string) => {
      const env = { ...process.env, PULUMI_HOME: home, PULUMI_SKIP_UPDATE_CHECK: "true" };
      return JSON.parse((await exec(pulumi, ["plugin", "ls", "--json"], { env })).stdout);
    };
    const plugin = expect.objectContaining({ name: "proxy", kind: "resource", version: release.version });

    const serverHome = path.join(outside.dir, "server-install-home");
    const serverEnv = { ...process.env, PULUMI_HOME: serverHome, PULUMI_SKIP_UPDATE_CHECK: "true" };
    await runInstallBlock("plugin", installBlock("plugin", release), outside.dir, serverEnv);
    expect(await installedIn(serverHome)).toContainEqual(plugin);

    const home = path.join(outside.dir, "file-install-home");
    const env = { ...process.env, PULUMI_HOME: home, PULUMI_SKIP_UPDATE_CHECK: "true" };
    const tarball = release.file("-linux-amd64.tar.gz");
    await exec(pulumi, ["plugin", "install", "resource", "proxy", release.version, "--file", tarball], { env });
    expect(await installedIn(home)).toContainEqual(plugin);

    const executable = path.join(home, "plugins", `resource-proxy-v${release.version}`, "pulumi-resource-proxy");
    const port = await portPrintedWithBarePath(executable);
    expect(port).toMatch(/^\d+$/);
  });

  it("imports with code into a TypeScript program on the release's npm package", async () => {
    const legacy = await api.proxyUsers.create({ name: "legacy-typescript" });
    const stack = { apiUrl: server.url, apiKey: server.rootKey, legacyId: legacy.id };
    try {
      const code = await importWithTypeScript(path.join(outside.dir, "typescript"), release, stack);
      expect(code).toMatch(/import \* as proxy from "pulumi-proxy\/native";[\s\S]*new proxy\.ProxyUser\("legacy", \{/);
    } finally {
      // Gone from the account, which the Python case's `coverage` then finds holding its own user only:
      // by the API, as the stack's destroy would, without an engine run.
      await api.proxyUsers.delete(legacy.id);
    }
  });

  it("`pulumi convert --language python` names the release's wheel in requirements.txt, never a bare pulumi_proxy", async () => {
    const requirements = await convertToPython(path.join(outside.dir, "convert"), release);
    const wheel = `pulumi_proxy-${release.version}-py3-none-any.whl`;
    expect(requirements.split("\n")).toContain(`pulumi_proxy @ ${release.baseUrl}${wheel}`);
    expect(fs.existsSync(path.join(release.dir, wheel))).toBe(true);
  });

  for (const language of LANGUAGES) {
    describe(`a ${language.language} program with no node on PATH`, () => {
      const root = path.join(outside.dir, `nodefree-${language.language}`);
      const app = path.join(root, "app");
      const home = path.join(root, "home");
      let env: NodeJS.ProcessEnv;
      const pulumi = (args: string[]) =>
        exec(path.join(inject("pulumiBinDir"), "pulumi"), [...args, "--non-interactive"], { cwd: app, env });

      beforeAll(async () => {
        fs.mkdirSync(app, { recursive: true });
        fs.mkdirSync(path.join(root, "backend"));
        await language.prepare(app, release);
        env = {
          PATH: nodeFreePath(root, language.tools),
          HOME: root,
          // An empty Pulumi home: no plugin is installed, so the engine must fetch this one itself.
          PULUMI_HOME: home,
          PULUMI_BACKEND_URL: `file://${path.join(root, "backend")}`,
          PULUMI_CONFIG_PASSPHRASE: "nodefree",
          PULUMI_SKIP_UPDATE_CHECK: "true",
          TMPDIR: ownTmpDir(root),
          ...REGISTRY_ENV,
          ...language.env,
        };
        await language.install?.(app, release, env);
        await pulumi(["stack", "init", "dev"]);
        await pulumi(credentialsConfig(server.url, server.rootKey));
      });

      it("has no node and no npm on its PATH", () => {
        for (const tool of ["node", "npm"]) {
          // The shell by its path: the program's PATH has no /bin either.
          const found = spawnSync("/bin/sh", ["-c", `command -v ${tool}`], { env, encoding: "utf8" });
          expect(found.error).toBeUndefined();
          expect(found.stdout.trim(), `${tool} is on the program's PATH`).toBe("");
        }
      });

      it(
        "the engine fetches the plugin from the SDK's pluginDownloadURL, and `pulumi up` creates the user",
        async () => {
          // Nobody installs the plugin: Go's `pulumi install` (in the README's block) fetches the plugins
          // the modules name, Python's host names it before the run, YAML's engine fetches it on first use.
          // No preview first: YAML's previews below, Python's and Go's in their quickstarts (a Go preview
          // builds the program once more).
          const up = await pulumi(["up", "--yes", "--skip-preview"]);
          expect(up.stdout).toMatch(/\+ 2 created/);
          const tarball = `pulumi-resource-proxy-v${release.version}-linux-amd64.tar.gz`;
          expect(await release.requests()).toContain(`/releases/v${release.version}/${tarball}`);
          expect(fs.existsSync(path.join(home, "plugins", `resource-proxy-v${release.version}`))).toBe(true);
          const userId = (await pulumi(["stack", "output", "userId"])).stdout.trim();
          // Each program reads the user back through the plugin's lookupProxyUser.
          expect((await pulumi(["stack", "output", "foundId"])).stdout.trim()).toBe(userId);
          expect(await api.proxyUsers.get(userId)).toMatchObject({
            name: language.userName,
            limits: { daily_gb: 5 },
          });
        },
        language.firstUpTimeoutMs,
      );

      if (language.language === "python") {
        it("is served by the plugin executable as the tool too: plan, coverage, drift (2 after a change outside), report", async () => {
          const executable = path.join(home, "plugins", `resource-proxy-v${release.version}`, "pulumi-resource-proxy");
          const userId = (await pulumi(["stack", "output", "userId"])).stdout.trim();
          await toolReviewsAStack({ executable, app, env, api, userId });
        });
      }

      // Python's and Go's programs preview clean in pythonQuickstart.test.ts and go-quickstart's README, and
      // Python's shows a change with --diff there: how the engine renders a config change is the language's
      // no more. YAML's program is the README's block, which nothing else previews.
      if (language.language === "yaml") {
        it("previews no changes, then a config change as an update with --diff", async () => {
          await pulumi(["preview", "--expect-no-changes"]);
          await pulumi(["config", "set", "dailyGb", "9"]);
          const { stdout } = await pulumi(["preview", "--diff"]);
          expect(stdout).toMatch(/~ proxy:index:ProxyUser: \(update\)[\s\S]*~ dailyGb\s*: 5 => 9/);
        });
      }

      // The SDK's plugin download URL reaches the code generator through the imported object's
      // provider: from a release built as the README says, it must be a string the generator takes.
      const imported = language.imported;
      if (imported) {
        it("`pulumi import --out` writes code that declares the imported user", async () => {
          const legacy = await api.proxyUsers.create({ name: `legacy-${language.language}` });
          const importArgs = ["import", "proxy:index:ProxyUser", "legacy", legacy.id, "--yes", "--protect=false"];
          await pulumi([...importArgs, "--out", imported.file]);
          expect(fs.readFileSync(path.join(app, imported.file), "utf8")).toMatch(imported.declares);
          await imported.adopt?.(app);
          // Not declared by the program: the next preview still runs on the state the import wrote.
          await pulumi(["preview"]);
        });
      }
      // No destroy: the plugin's Delete is the same for every language, and pythonQuickstart.test.ts
      // checks it with this release's executable; the server goes with the suite.
    });
  }
});
