// @ts-check
/**
 * Builds the Pulumi CLI and this checkout's language host from the Go modules, into the shared cache.
 * Every output is written under a temporary name and renamed, so an interrupted build leaves nothing
 * that looks finished.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LAZY_ZXCVBN_RECIPE, useLazyZxcvbn } from "./lazy-zxcvbn.mjs";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const languageHostSource = path.join(repoRoot, "tools", "language-host");
/**
 * The package's process helpers (provider/process/) that the host needs too: it embeds
 * defer-modules.cjs (preloaded into every program), and provisioning installs both beside the
 * dynamic provider's launcher. They are copied into the host's build folder and named in its hash.
 */
export const RUNTIME_HELPERS = ["defer-modules.cjs", "engine-watch.cjs"].map((name) =>
  path.join(repoRoot, "provider", "process", name),
);
export const MIN_GO = [1, 24];
/** What a Go-built CLI's stamp records; a CLI built by another recipe is built again. */
export const GO_BUILD_RECIPE = LAZY_ZXCVBN_RECIPE;

/** @param {string} message */
function say(message) {
  process.stderr.write(`[pulumi-cli] ${message}\n`);
}

/** A command's trimmed output, or undefined when it is missing or fails. @param {string} command @param {string[]} args */
export function tryOutput(command, args) {
  try {
    return execFileSync(command, args, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 30_000,
    }).trim();
  } catch {
    return undefined;
  }
}

/**
 * The language host's Go sources and the files they embed, by the name the build folder gives them
 * and where each comes from, in a stable order.
 * @returns {{ name: string, file: string }[]}
 */
function languageHostFiles() {
  const own = fs
    .readdirSync(languageHostSource, { withFileTypes: true })
    // Its README documents the host and is no part of it: editing it must not rebuild every checkout's host.
    .filter((entry) => entry.isFile() && !entry.name.endsWith(".md"))
    .map((entry) => ({ name: entry.name, file: path.join(languageHostSource, entry.name) }));
  const helpers = RUNTIME_HELPERS.map((file) => ({ name: path.basename(file), file }));
  return [...own, ...helpers].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The language host built from this checkout's tools/language-host lives in a folder named after
 * the hash of those files, beside a hard link to the shared pulumi binary (pulumi looks for its
 * language host next to itself). Clones at different commits therefore never overwrite each other's
 * host, and a changed source is built on the next run.
 * @param {string} versionDir
 */
function languageHostRoot(versionDir) {
  const hash = createHash("sha256");
  // The dynamic provider's launcher is installed into the same bin folder, so it names it too.
  const launchers = fs
    .readdirSync(path.join(languageHostSource, "dynamic-provider"))
    .sort()
    .map((name) => ({
      name: `dynamic-provider/${name}`,
      file: path.join(languageHostSource, "dynamic-provider", name),
    }));
  for (const { name, file } of [...languageHostFiles(), ...launchers]) {
    hash.update(`${name}\0`).update(fs.readFileSync(file)).update("\0");
  }
  return path.join(versionDir, "hosts", hash.digest("hex").slice(0, 16));
}

/** A go.mod that `go get` never finished has no requires; building on it fails with a puzzling error. @param {string} modFile */
export function goModIsComplete(modFile) {
  return fs.existsSync(modFile) && /^require\b/m.test(fs.readFileSync(modFile, "utf8"));
}

export function goVersionProblem() {
  const reported = tryOutput("go", ["env", "GOVERSION"]);
  if (!reported) return "no Go toolchain (`go`) on PATH";
  const [major = 0, minor = 0] = reported.replace(/^go/, "").split(".").map(Number);
  const [minMajor = 0, minMinor = 0] = MIN_GO;
  if (major < minMajor || (major === minMajor && minor < minMinor)) {
    return `Go ${reported} is too old (need go${MIN_GO.join(".")} or newer)`;
  }
  return undefined;
}

/**
 * Upstream's replace directives must be carried into the throwaway module: `go install pkg@version`
 * refuses modules that have them, and without them the dependency graph does not build.
 * @param {string} version @param {Record<string, string>} env
 */
function upstreamReplaceLines(version, env) {
  const info = JSON.parse(
    execFileSync("go", ["mod", "download", "-json", `github.com/pulumi/pulumi/pkg/v3@v${version}`], {
      encoding: "utf8",
      env,
    }),
  );
  const goMod = fs.readFileSync(info.GoMod, "utf8");
  const lines = [...goMod.matchAll(/^replace\s+(\S+)\s+=>\s+(\S+)\s+(v\S+)\s*$/gm)];
  return lines.map(([, from, to, toVersion]) => `replace ${from} => ${to} ${toVersion}`);
}

/** @param {string[]} args @param {string} cwd @param {Record<string, string>} env */
function run(args, cwd, env) {
  return new Promise((resolve, reject) => {
    const child = spawn("go", args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-4_000)));
    const ticker = setInterval(() => say(`  still running go ${args[0]}...`), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(ticker);
      code === 0 ? resolve(undefined) : reject(new Error(`go ${args.join(" ")} failed (exit ${code}):\n${stderr}`));
    });
  });
}

/** @param {string} versionDir */
function goEnv(versionDir) {
  fs.mkdirSync(path.join(versionDir, "build", "language-host"), { recursive: true });
  return /** @type {Record<string, string>} */ ({
    ...process.env,
    GOFLAGS: "-mod=mod",
    // The checksum database has no entries for these module versions on this kind of network.
    GONOSUMDB: [process.env.GONOSUMDB, "github.com/pulumi/pulumi"].filter(Boolean).join(","),
  });
}

/** @param {string} version */
const stampVersion = (version) => (/** @type {string} */ pkg) => `-s -w -X ${pkg}=v${version}`;

/** @param {string} version @param {string} binDir */
export async function fromGoBuild(version, binDir) {
  const versionDir = path.dirname(binDir);
  const buildDir = path.join(versionDir, "build");
  const env = goEnv(versionDir);
  const modFile = path.join(buildDir, "go.mod");
  if (!goModIsComplete(modFile)) {
    say(`fetching github.com/pulumi/pulumi/pkg/v3@v${version} from the Go module proxy`);
    fs.rmSync(path.join(buildDir, "go.sum"), { force: true });
    const replaces = upstreamReplaceLines(version, env);
    fs.writeFileSync(modFile, ["module pulumi-proxy.local/cli-build", "", "go 1.24", "", ...replaces, ""].join("\n"));
    await run(
      ["get", `github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@v${version}`, `github.com/pulumi/pulumi/sdk/v3@v${version}`],
      buildDir,
      env,
    );
  }
  useLazyZxcvbn(buildDir, env);
  say(`compiling pulumi v${version} (the first build takes several minutes)`);
  const ldflags = stampVersion(version)("github.com/pulumi/pulumi/sdk/v3/go/common/version.Version");
  const target = path.join(binDir, "pulumi");
  await run(
    [
      "build",
      "-trimpath",
      "-ldflags",
      ldflags,
      "-o",
      `${target}.partial`,
      "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi",
    ],
    buildDir,
    env,
  );
  fs.renameSync(`${target}.partial`, target);
}

/** Upstream's run harness for Python programs, from the pinned sdk module (sdk/python/cmd). */
const PYTHON_HARNESS = "pulumi-language-python-exec";

/** @param {string} existing @param {string} linked */
function linkOnce(existing, linked) {
  if (!fs.existsSync(linked)) fs.linkSync(existing, linked);
}

/**
 * A hard link to `existing` as it is now: the CLI is rebuilt in place (renamed over), and a link made
 * before still holds the old binary. Replaced by rename, so a starting engine sees one or the other.
 * @param {string} existing @param {string} linked
 */
function linkCurrent(existing, linked) {
  if (fs.existsSync(linked) && fs.statSync(linked).ino === fs.statSync(existing).ino) return;
  fs.rmSync(`${linked}.partial`, { force: true });
  fs.linkSync(existing, `${linked}.partial`);
  fs.renameSync(`${linked}.partial`, linked);
}

/**
 * The one host binary serves the language it is started as (main.go says how). As YAML's host and
 * converter, it builds upstream's on the first YAML program (yaml.go), so provisioning pays nothing
 * for a language most machines never run.
 */
export const LANGUAGE_HOSTS = [
  "pulumi-language-nodejs",
  "pulumi-language-python",
  "pulumi-language-go",
  "pulumi-language-yaml",
  "pulumi-converter-yaml",
];

/**
 * Builds this checkout's language host next to a hard link of the shared pulumi binary, under each
 * name of LANGUAGE_HOSTS, with Python's run harness beside it as upstream's CLI ships it.
 * @param {string} version @param {string} coreBinDir @returns {Promise<string>} the bin folder to use
 */
export async function languageHostBin(version, coreBinDir) {
  const versionDir = path.dirname(coreBinDir);
  const hostBin = path.join(languageHostRoot(versionDir), "bin");
  const host = path.join(hostBin, "pulumi-language-nodejs");
  if (!fs.existsSync(host)) {
    say(
      `compiling the language host (${LANGUAGE_HOSTS.join(", ")}) from ${path.relative(repoRoot, languageHostSource)} into ${hostBin}`,
    );
    fs.mkdirSync(hostBin, { recursive: true });
    const buildDir = path.join(versionDir, "build");
    const env = goEnv(versionDir);
    // The folder is shared by every clone: another checkout's files must not be built into this host.
    const hostBuildDir = path.join(buildDir, "language-host");
    fs.rmSync(hostBuildDir, { recursive: true, force: true });
    fs.mkdirSync(hostBuildDir);
    for (const { name, file } of languageHostFiles()) fs.copyFileSync(file, path.join(hostBuildDir, name));
    await run(
      [
        "build",
        "-trimpath",
        "-ldflags",
        stampVersion(version)("main.version"),
        "-o",
        `${host}.partial`,
        "./language-host",
      ],
      buildDir,
      env,
    );
    fs.renameSync(`${host}.partial`, host);
  }
  for (const name of LANGUAGE_HOSTS.slice(1)) linkOnce(host, path.join(hostBin, name));
  const harness = path.join(hostBin, PYTHON_HARNESS);
  if (!fs.existsSync(harness)) {
    const sdkDir = execFileSync("go", ["list", "-m", "-f", "{{.Dir}}", "github.com/pulumi/pulumi/sdk/v3"], {
      cwd: path.join(versionDir, "build"),
      env: goEnv(versionDir),
      encoding: "utf8",
    }).trim();
    fs.copyFileSync(path.join(sdkDir, "python", "cmd", PYTHON_HARNESS), `${harness}.partial`);
    fs.chmodSync(`${harness}.partial`, 0o755);
    fs.renameSync(`${harness}.partial`, harness);
  }
  linkCurrent(path.join(coreBinDir, "pulumi"), path.join(hostBin, "pulumi"));
  // Upstream's YAML host, once built (yaml.go), serves every build of this host.
  const sharedYaml = path.join(versionDir, "pulumi-yaml");
  fs.mkdirSync(sharedYaml, { recursive: true });
  if (!fs.existsSync(path.join(hostBin, "pulumi-yaml"))) fs.symlinkSync(sharedYaml, path.join(hostBin, "pulumi-yaml"));
  return hostBin;
}

/**
 * Builds upstream's YAML host and converter now, if missing, instead of on the first YAML program:
 * the test suite does, before any timed test. Only this project's host knows the flag.
 * @param {string} hostBin
 */
export function prepareYamlHost(hostBin) {
  execFileSync(path.join(hostBin, "pulumi-language-yaml"), ["--build-yaml"], {
    stdio: ["ignore", "ignore", "inherit"],
  });
}

/** @returns {Promise<ProvisionedCli>} */
