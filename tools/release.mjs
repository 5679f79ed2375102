// @ts-check
/**
 * `npm run release [-- --plugin-download-url <url>] [--repository <url>] [--out <dir>]`: every artefact of a release in
 * one folder, whose path is the last line printed:
 *
 *   pulumi-resource-proxy-v<version>-<os>-<arch>.tar.gz  the self-contained plugin (no Node.js needed), for
 *                                                         linux, darwin (amd64, arm64) and windows (amd64)
 *   pulumi-proxy-<version>.tgz                            the npm package
 *   pulumi_proxy-<version>-py3-none-any.whl               the Python SDK
 *   pulumi-proxy-sdk-go-v<version>.zip                    the Go SDK module, with its go.sum
 *   SHA256SUMS                                            `sha256sum -c SHA256SUMS` checks them all
 *
 * The URL goes into the schema the plugin serves, and so into every SDK generated from it here (the
 * committed native-sdk/ names none); the engine then downloads
 * `<url>/pulumi-resource-proxy-v<version>-<os>-<arch>.tar.gz` when a program needs the plugin. A
 * `${VERSION}` in the URL is filled in here (literalDownloadURL). This machine builds the plugin for
 * every platform (release/compile.mjs).
 * Everything is built in a staging folder: dist/ and native-sdk/ are left as they are.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { generateSdk } from "./gen-sdks.mjs";
import { provisionPulumi } from "./provision-pulumi.mjs";
import { bundlePlugin } from "./release/bundle.mjs";
import { compileExecutable, executableName, PLATFORMS } from "./release/compile.mjs";
import { buildWheel, packNpm, zipGoModule } from "./release/packages.mjs";

const exec = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"));

/** @param {string} message */
const say = (message) => process.stderr.write(`[release] ${message}\n`);

/** @param {string} name @param {() => Promise<T>} step @returns {Promise<T>} @template T */
async function timed(name, step) {
  const started = Date.now();
  const result = await step();
  say(`${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return result;
}

/**
 * The plugin tarball the engine installs: the executable at its top, as the engine expects, with the
 * licence. gzip at its default level: the engine reads .tar.gz only, and -9 took three times the CPU
 * for 0.6 % less (32.4 against 32.6 MB).
 * @param {{ executable: string, tarball: string }} options
 */
async function tarPlugin({ executable, tarball }) {
  const dir = path.dirname(executable);
  fs.copyFileSync(path.join(repoRoot, "LICENSE"), path.join(dir, "LICENSE"));
  await exec("tar", ["--owner=0", "--group=0", "-cf", tarball, "-z", "-C", dir, path.basename(executable), "LICENSE"]);
}

/** @param {string} dir */
function writeChecksums(dir) {
  const lines = fs
    .readdirSync(dir)
    .filter((file) => file !== "SHA256SUMS")
    .sort()
    .map(
      (file) =>
        `${createHash("sha256")
          .update(fs.readFileSync(path.join(dir, file)))
          .digest("hex")}  ${file}`,
    );
  fs.writeFileSync(path.join(dir, "SHA256SUMS"), `${lines.join("\n")}\n`);
}

/**
 * The download URL as the schema must carry it: a plain string. The engine fills `${VERSION}` in at
 * download time, but `pulumi import` first writes the URL into a PCL program, where `${…}` is a
 * template and the engine's own bind stops with "invalid download URL for package: expected string
 * literal" (after it has imported the object and created the --out file, which stays empty). A release
 * has one version, so `${VERSION}` and `${NAME}` are filled in here; `${OS}` and `${ARCH}` cannot be,
 * since one SDK serves every platform, and the tarball's name carries them anyway.
 * @param {string} url @param {string} version @returns {string}
 */
export function literalDownloadURL(url, version) {
  /** @type {Record<string, string>} */
  const filled = { VERSION: version, NAME: "proxy" };
  const literal = url.replace(/\$\{(VERSION|NAME)\}/g, (_, name) => filled[name] ?? "");
  const template = literal.match(/\$\{[^}]*\}?|%\{|["\\]/);
  if (template) {
    throw new Error(
      `--plugin-download-url ${url}: ${template[0]} cannot be in the URL the SDKs carry ` +
        `(\`pulumi import\` reads it as a template); only \${VERSION} and \${NAME} are filled in, by the release, ` +
        "and the plugin tarball's name already holds the OS and architecture",
    );
  }
  return literal;
}

/** @param {{ pluginDownloadURL?: string, repository?: string, outDir?: string }} options @returns {Promise<string>} the release folder */
export async function release({ pluginDownloadURL: requestedURL, repository, outDir }) {
  const { version } = manifest;
  const pluginDownloadURL = requestedURL === undefined ? undefined : literalDownloadURL(requestedURL, version);
  const out = path.resolve(outDir ?? path.join(repoRoot, "release", `v${version}`));
  // Inside the repository, so that compiling and bundling resolve its node_modules.
  const stage = path.join(repoRoot, ".pulumi-proxy", `release-stage-${process.pid}`);
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  fs.mkdirSync(stage, { recursive: true });
  try {
    const dist = path.join(stage, "package", "dist");
    const tsc = path.join(repoRoot, "node_modules", "typescript", "bin", "tsc");
    const cli = provisionPulumi();
    const compiled = timed("compiled the package", () =>
      exec(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", dist, "--sourceMap", "false"], {
        cwd: repoRoot,
      }),
    );
    // Awaited below; marked handled now, so that a failure elsewhere first is the one reported.
    compiled.catch(() => {});
    const script = path.join(stage, "pulumi-resource-proxy.cjs");
    await timed("bundled the plugin", () => bundlePlugin({ outfile: script, pluginDownloadURL, repository }));
    // The executables' script: the same plugin, with the tool beside it (cli/executable.ts).
    const executableScript = path.join(stage, "pulumi-proxy-executable.cjs");
    await timed("bundled the executable", () =>
      bundlePlugin({ outfile: executableScript, pluginDownloadURL, repository, entry: "executable" }),
    );

    const plugins = Promise.all(
      PLATFORMS.map(async (platform) => {
        const name = `${platform.os}-${platform.arch}`;
        const dir = path.join(stage, `plugin-${name}`);
        fs.mkdirSync(dir);
        const executable = path.join(dir, executableName(platform, "pulumi-resource-proxy"));
        await timed(`executable for ${name}`, () =>
          compileExecutable({ script: executableScript, executable, platform }),
        );
        const tarball = path.join(out, `pulumi-resource-proxy-v${version}-${name}.tar.gz`);
        await timed(`plugin tarball for ${name}`, () => tarPlugin({ executable, tarball }));
      }),
    );
    plugins.catch(() => {});

    const { binDir } = await cli;
    const sdkDir = (/** @type {string} */ language) => path.join(stage, "sdk", language, "src");
    const languages = ["nodejs", "python", "go"];
    await timed("generated the SDKs", () =>
      Promise.all(
        languages.map((language) => generateSdk({ binDir, language, outDir: sdkDir(language), plugin: script })),
      ),
    );
    const go = timed("Go module", () =>
      zipGoModule({
        sdkDir: sdkDir("go"),
        outDir: out,
        version,
        pulumiVersion: manifest.dependencies["@pulumi/pulumi"],
      }),
    );
    go.catch(() => {});
    const wheel = buildWheel({ sdkDir: sdkDir("python"), outDir: out });
    await compiled;
    const { moduleDir } = await go;
    const contents = { pluginScript: script, nodeSdk: sdkDir("nodejs"), wheel, goModule: moduleDir };
    await timed("npm package", () => packNpm({ repoRoot, packageDir: path.dirname(dist), contents, outDir: out }));
    await plugins;
    writeChecksums(out);
    return out;
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { "plugin-download-url": { type: "string" }, repository: { type: "string" }, out: { type: "string" } },
  });
  if (!values["plugin-download-url"]) {
    say(
      "no --plugin-download-url: the SDKs name none, so users install the plugin with `pulumi plugin install --file`",
    );
  }
  const started = Date.now();
  if (!values.repository) {
    say("no --repository: the schema names no homepage and no repository, which the Pulumi registry links to");
  }
  const out = await release({
    pluginDownloadURL: values["plugin-download-url"],
    repository: values.repository,
    outDir: values.out,
  });
  for (const file of fs.readdirSync(out).sort()) {
    say(`  ${(fs.statSync(path.join(out, file)).size / 1e6).toFixed(1).padStart(6)} MB  ${file}`);
  }
  say(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  process.stdout.write(`${out}\n`);
}
