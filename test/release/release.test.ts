import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { portPrintedWithBarePath } from "../native/plugin";
import { outsideFolder } from "../support/outside";
import { buildAndServeRelease, type ServedRelease } from "./releaseFolder";

const exec = promisify(execFile);
const PINNED_PULUMI = require("../../package.json").dependencies["@pulumi/pulumi"] as string;

/**
 * A program in one language as a user with no Node.js runs it: `prepare` writes it into `app` and
 * installs its SDK from the release, `tools` are the commands it needs on PATH (besides the Pulumi
 * CLI and its language hosts), and the program reads the config `dailyGb` (default 5) for the user
 * `nodefree-<language>` it declares, so that a config change is a change to preview.
 */
interface LanguageCase {
  language: string;
  tools: string[];
  /** More of the program's environment (Go's GOMODCACHE, GOFLAGS: HOME is the case's own folder). */
  env?: Record<string, string>;
  prepare(app: string, release: ServedRelease): Promise<void>;
}

const PYTHON: LanguageCase = {
  language: "python",
  tools: ["python3"],
  async prepare(app, release) {
    fs.writeFileSync(
      path.join(app, "Pulumi.yaml"),
      "name: nodefree-python\nruntime:\n  name: python\n  options:\n    virtualenv: venv\n",
    );
    fs.writeFileSync(
      path.join(app, "__main__.py"),
      [
        "import pulumi",
        "import pulumi_proxy as proxy",
        "",
        'daily_gb = pulumi.Config().get_float("dailyGb") or 5',
        'user = proxy.ProxyUser("scraper", name="nodefree-python", limits=proxy.ProxyUserLimitsArgs(daily_gb=daily_gb))',
        'pulumi.export("userId", user.proxy_user_id)',
        "",
      ].join("\n"),
    );
    await exec("python3", ["-m", "venv", path.join(app, "venv")]);
    // The wheel as a Python user installs it, beside the Pulumi SDK of the CLI's version.
    await exec(path.join(app, "venv", "bin", "pip"), [
      "install",
      "--quiet",
      `pulumi==${PINNED_PULUMI}`,
      release.file(".whl"),
    ]);
  },
};

/** Go builds from the machine's module and build caches, as a Go user's machine has them. */
const GO_CACHES = Object.fromEntries(
  ["GOMODCACHE", "GOCACHE", "GOPATH"].map((name) => [
    name,
    spawnSync("go", ["env", name], { encoding: "utf8" }).stdout.trim(),
  ]),
);

const GO: LanguageCase = {
  language: "go",
  tools: ["go"],
  env: { ...GO_CACHES, GOFLAGS: "-mod=mod", CGO_ENABLED: "0" },
  async prepare(app, release) {
    // The module zip unpacked beside the program, and named by a replace, as the README says.
    await exec("unzip", ["-q", release.file(".zip"), "-d", path.dirname(app)]);
    const sdk = path.join(path.dirname(app), "pulumi-proxy-sdk-go");
    fs.writeFileSync(path.join(app, "Pulumi.yaml"), "name: nodefree-go\nruntime: go\n");
    fs.writeFileSync(
      path.join(app, "go.mod"),
      `module example.com/nodefree\n\ngo 1.25\n\nrequire example.com/pulumi-proxy/sdk/go v${release.version}\n\nreplace example.com/pulumi-proxy/sdk/go => ${sdk}\n`,
    );
    fs.writeFileSync(
      path.join(app, "main.go"),
      [
        "package main",
        "",
        "import (",
        '\t"example.com/pulumi-proxy/sdk/go/proxy"',
        '\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi"',
        '\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"',
        ")",
        "",
        "func main() {",
        "\tpulumi.Run(func(ctx *pulumi.Context) error {",
        '\t\tdailyGb, err := config.TryFloat64(ctx, "dailyGb")',
        "\t\tif err != nil {",
        "\t\t\tdailyGb = 5",
        "\t\t}",
        '\t\tuser, err := proxy.NewProxyUser(ctx, "scraper", &proxy.ProxyUserArgs{',
        '\t\t\tName:   pulumi.String("nodefree-go"),',
        "\t\t\tLimits: &proxy.ProxyUserLimitsArgs{DailyGb: pulumi.Float64(dailyGb)},",
        "\t\t})",
        "\t\tif err != nil {",
        "\t\t\treturn err",
        "\t\t}",
        '\t\tctx.Export("userId", user.ProxyUserId)',
        "\t\treturn nil",
        "\t})",
        "}",
        "",
      ].join("\n"),
    );
    await exec("go", ["mod", "tidy"], { cwd: app, env: { ...process.env, ...GO_CACHES, GOFLAGS: "-mod=mod" } });
  },
};

/** YAML needs no SDK: the resource names the plugin's version and where to download it. */
const YAML: LanguageCase = {
  language: "yaml",
  tools: [],
  async prepare(app, release) {
    fs.writeFileSync(
      path.join(app, "Pulumi.yaml"),
      [
        "name: nodefree-yaml",
        "runtime: yaml",
        "config:",
        "  dailyGb:",
        "    type: integer",
        "    default: 5",
        "resources:",
        "  scraper:",
        "    type: proxy:index:ProxyUser",
        "    properties:",
        "      name: nodefree-yaml",
        "      limits:",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: YAML's own interpolation, not a template
        "        dailyGb: ${dailyGb}",
        "    options:",
        `      version: ${release.version}`,
        // YAML takes `${…}` as its own interpolation, so the URL names the version itself.
        `      pluginDownloadURL: ${release.pluginDownloadURL.replace("$" + "{VERSION}", release.version)}`,
        "outputs:",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: YAML's own interpolation, not a template
        "  userId: ${scraper.proxyUserId}",
        "",
      ].join("\n"),
    );
  },
};

const LANGUAGES: LanguageCase[] = [PYTHON, GO, YAML];

/** A PATH with the Pulumi CLI, its language hosts and a case's tools, and no node or npm. */
function nodeFreePath(root: string, tools: string[]): string {
  const shims = path.join(root, "tools");
  fs.mkdirSync(shims, { recursive: true });
  for (const tool of tools) {
    const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    if (!found) throw new Error(`${tool} is not on this machine's PATH`);
    fs.symlinkSync(found, path.join(shims, tool));
  }
  return [inject("pulumiBinDir"), shims].join(path.delimiter);
}

describe("the release folder (npm run release)", () => {
  const outside = outsideFolder();
  let release: ServedRelease;
  let server: ReferenceServer;
  let api: ProxyClient;

  beforeAll(async () => {
    release = await buildAndServeRelease(path.join(outside.dir, "release"));
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
  });
  afterAll(async () => {
    await server?.close();
    await release?.close();
    outside.cleanup();
  });

  it("holds the plugin, the npm tarball, the wheel, the Go module and their checksums", async () => {
    const names = fs.readdirSync(release.dir).sort();
    expect(names).toEqual([
      "SHA256SUMS",
      `pulumi-proxy-${release.version}.tgz`,
      `pulumi-proxy-sdk-go-v${release.version}.zip`,
      `pulumi-resource-proxy-v${release.version}-linux-amd64.tar.gz`,
      `pulumi_proxy-${release.version}-py3-none-any.whl`,
    ]);
    await exec("sha256sum", ["--check", "--strict", "SHA256SUMS"], { cwd: release.dir });
    const tarball = release.file("-linux-amd64.tar.gz");
    expect(fs.statSync(tarball).size).toBeLessThan(50 * 1024 * 1024);
    expect((await exec("tar", ["-tzf", tarball])).stdout.split("\n").filter(Boolean).sort()).toEqual([
      "LICENSE",
      "pulumi-resource-proxy",
    ]);
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
    expect(JSON.parse(npmSdk.stdout).pulumi).toMatchObject({ server: release.pluginDownloadURL });
  });

  it("installs with `pulumi plugin install --file`, and the plugin starts with nothing on PATH", async () => {
    const home = path.join(outside.dir, "file-install-home");
    const env = { ...process.env, PULUMI_HOME: home, PULUMI_SKIP_UPDATE_CHECK: "true" };
    const pulumi = path.join(inject("pulumiBinDir"), "pulumi");
    const tarball = release.file("-linux-amd64.tar.gz");
    await exec(pulumi, ["plugin", "install", "resource", "proxy", release.version, "--file", tarball], { env });
    const listed = JSON.parse((await exec(pulumi, ["plugin", "ls", "--json"], { env })).stdout);
    expect(listed).toContainEqual(
      expect.objectContaining({ name: "proxy", kind: "resource", version: release.version }),
    );

    const executable = path.join(home, "plugins", `resource-proxy-v${release.version}`, "pulumi-resource-proxy");
    const port = await portPrintedWithBarePath(executable);
    expect(port).toMatch(/^\d+$/);
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
          ...language.env,
        };
        await pulumi(["stack", "init", "dev"]);
        await pulumi(["config", "set", "proxy:apiUrl", server.url]);
        await pulumi(["config", "set", "--secret", "proxy:apiKey", server.rootKey]);
      });

      it("has no node and no npm on its PATH", () => {
        for (const tool of ["node", "npm"]) {
          // The shell by its path: the program's PATH has no /bin either.
          const found = spawnSync("/bin/sh", ["-c", `command -v ${tool}`], { env, encoding: "utf8" });
          expect(found.error).toBeUndefined();
          expect(found.stdout.trim(), `${tool} is on the program's PATH`).toBe("");
        }
      });

      it("`pulumi up` downloads the plugin from the SDK's pluginDownloadURL and creates the user", async () => {
        const up = await pulumi(["up", "--yes"]);
        // Python's host names the plugin before the run; Go's and YAML's engines fetch it on first use.
        expect(up.stdout).toMatch(
          /(Installing plugin proxy-[\d.]+: done|Downloading provider: proxy)[\s\S]*\+ 2 created/,
        );
        const tarball = `pulumi-resource-proxy-v${release.version}-linux-amd64.tar.gz`;
        expect(release.requests).toContain(`/releases/v${release.version}/${tarball}`);
        expect(fs.existsSync(path.join(home, "plugins", `resource-proxy-v${release.version}`))).toBe(true);
        const userId = (await pulumi(["stack", "output", "userId"])).stdout.trim();
        expect(await api.proxyUsers.get(userId)).toMatchObject({
          name: `nodefree-${language.language}`,
          limits: { daily_gb: 5 },
        });
      });

      it("previews no changes, then a config change as an update with --diff", async () => {
        await pulumi(["preview", "--expect-no-changes"]);
        await pulumi(["config", "set", "dailyGb", "9"]);
        const { stdout } = await pulumi(["preview", "--diff"]);
        expect(stdout).toMatch(/~ proxy:index:ProxyUser: \(update\)[\s\S]*~ dailyGb\s*: 5 => 9/);
      });

      it("destroys the user", async () => {
        const userId = (await pulumi(["stack", "output", "userId"])).stdout.trim();
        await pulumi(["destroy", "--yes"]);
        await expect(api.proxyUsers.get(userId)).rejects.toThrow();
      });
    });
  }
});
