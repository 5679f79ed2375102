// @ts-check
/**
 * Provisions the Pulumi CLI at exactly the version of the pinned @pulumi/pulumi package, because the
 * Automation API and the engine must agree. Called by the test setup and the demo, never by npm install.
 *
 * In order: a `pulumi` on PATH with that version; the official installer (abandoned fast when its
 * host is unreachable); a build from the Go modules with the machine's `go`, cached outside the
 * repository so that only the first run pays for it.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { withLock } from "./cache-lock.mjs";
import {
  fromGoBuild,
  GO_BUILD_RECIPE,
  goVersionProblem,
  languageHostBin,
  MIN_GO,
  prepareYamlHost,
  RUNTIME_HELPERS,
  tryOutput,
} from "./go-build.mjs";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OFFICIAL_HOST = "https://get.pulumi.com";

/** @typedef {{ binDir: string, version: string, source: "path" | "cache" | "installer" | "go-build" }} ProvisionedCli */

/** @param {string} message */
function say(message) {
  process.stderr.write(`[pulumi-cli] ${message}\n`);
}

export function pinnedVersion() {
  const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"));
  const pin = manifest.dependencies?.["@pulumi/pulumi"];
  if (!/^\d+\.\d+\.\d+$/.test(pin ?? "")) {
    throw new Error(`package.json must pin @pulumi/pulumi to an exact version, found "${pin}"`);
  }
  return /** @type {string} */ (pin);
}

export function cacheRoot() {
  if (process.env.PULUMI_PROXY_CACHE_DIR) return process.env.PULUMI_PROXY_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.join(base, "pulumi-proxy");
}

/** @param {string} name */
function onPath(name) {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

/**
 * The CLI runs dynamic providers through `pulumi-resource-pulumi-nodejs` from its bin folder. The
 * project's launcher replaces the shell script that ships in @pulumi/pulumi: it runs the same
 * provider, and stops it when the engine is killed (the file says how).
 * @param {string} binDir
 */
function installDynamicProviderLauncher(binDir) {
  // The helpers first (the package's own, provider/process/): the launcher requires them (and goes on without the deferral).
  for (const helper of RUNTIME_HELPERS) installFile(helper, path.join(binDir, `pulumi-proxy-${path.basename(helper)}`));
  installFile(
    path.join(repoRoot, "tools", "language-host", "dynamic-provider", "pulumi-resource-pulumi-nodejs.cjs"),
    path.join(binDir, "pulumi-resource-pulumi-nodejs"),
  );
}

/** @param {string} source @param {string} target */
function installFile(source, target) {
  const current = fs.existsSync(target) ? fs.readFileSync(target) : undefined;
  if (current?.equals(fs.readFileSync(source))) return;
  // Written beside and renamed over: a provider starting meanwhile sees the old file or the new one.
  fs.copyFileSync(source, `${target}.partial`);
  fs.chmodSync(`${target}.partial`, 0o755);
  fs.renameSync(`${target}.partial`, target);
}

/** @param {string} version */
function fromPath(version) {
  const existing = onPath("pulumi");
  if (!existing) return undefined;
  const reported = tryOutput(existing, ["version"]);
  if (reported !== `v${version}`) {
    say(`ignoring ${existing}: it is ${reported ?? "unreadable"}, the project needs v${version}`);
    return undefined;
  }
  return path.dirname(existing);
}

/** @param {string} binDir */
function readStamp(binDir) {
  const stampFile = path.join(binDir, ".provisioned.json");
  return fs.existsSync(stampFile) ? JSON.parse(fs.readFileSync(stampFile, "utf8")) : undefined;
}

/** @param {string} binDir @param {string} version */
function cacheIsComplete(binDir, version) {
  const stamp = readStamp(binDir);
  if (stamp?.version !== version) return false;
  if (stamp.source === "go-build" && stamp.recipe !== GO_BUILD_RECIPE) return false;
  // A Go build keeps its language hosts apart, one folder per source (see languageHostRoot).
  const needed = stamp.source === "go-build" ? ["pulumi"] : ["pulumi", "pulumi-language-nodejs"];
  return needed.every((name) => fs.existsSync(path.join(binDir, name)));
}

/** @param {string} version @param {string} binDir */
async function fromInstaller(version, binDir) {
  const archive = `${OFFICIAL_HOST}/releases/sdk/pulumi-v${version}-${process.platform === "darwin" ? "darwin" : "linux"}-${process.arch === "arm64" ? "arm64" : "x64"}.tar.gz`;
  let response;
  try {
    response = await fetch(archive, { signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    say(`official installer unreachable (${/** @type {Error} */ (error).cause ?? error}); falling back to a Go build`);
    return false;
  }
  if (!response.ok) {
    say(`official installer answered ${response.status} for v${version}; falling back to a Go build`);
    return false;
  }
  say(`downloading ${archive}`);
  const tarball = path.join(path.dirname(binDir), "pulumi.tar.gz");
  fs.writeFileSync(tarball, Buffer.from(await response.arrayBuffer()));
  execFileSync("tar", ["-xzf", tarball, "-C", binDir, "--strip-components=1"]);
  fs.rmSync(tarball);
  return true;
}

/**
 * @param {{ yaml?: boolean }} [options] yaml: where the project's host serves YAML, build upstream's
 *   YAML host now rather than on the first YAML program (the tests do; the demo runs none)
 */
export async function provisionPulumi({ yaml = false } = {}) {
  const version = pinnedVersion();
  const started = Date.now();
  const onPathDir = fromPath(version);
  if (onPathDir) return { binDir: onPathDir, version, source: "path" };

  const versionDir = path.join(cacheRoot(), `pulumi-${version}`);
  const coreBinDir = path.join(versionDir, "bin");
  fs.mkdirSync(coreBinDir, { recursive: true });
  const cli = await withLock(versionDir, async () => {
    /** @type {ProvisionedCli["source"]} */
    let source = "cache";
    if (!cacheIsComplete(coreBinDir, version)) {
      say(`provisioning pulumi v${version} into ${coreBinDir}`);
      source = await provisionCore(version, coreBinDir);
    }
    const fromGo = readStamp(coreBinDir)?.source === "go-build";
    const binDir = fromGo ? await languageHostBin(version, coreBinDir) : coreBinDir;
    installDynamicProviderLauncher(binDir);
    if (source !== "cache")
      say(`pulumi v${version} ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${source})`);
    return { binDir, version, source };
  });
  // Outside the lock: the YAML host has a lock of its own, and other checkouts need not wait for it.
  if (yaml && readStamp(coreBinDir)?.source === "go-build") prepareYamlHost(cli.binDir);
  return cli;
}

/** @param {string} version @param {string} binDir @returns {Promise<ProvisionedCli["source"]>} */
async function provisionCore(version, binDir) {
  /** @type {ProvisionedCli["source"]} */
  let source = "installer";
  const rebuildOnly = readStamp(binDir)?.source === "go-build";
  if (rebuildOnly || !(await fromInstaller(version, binDir))) {
    const problem = goVersionProblem();
    if (problem) {
      throw new Error(
        `Cannot provision the Pulumi CLI v${version}: no pulumi v${version} on PATH, the official installer is unreachable, and ${problem}. ` +
          `Install Pulumi CLI v${version} (https://www.pulumi.com/docs/install/) or Go ${MIN_GO.join(".")}+ and run again.`,
      );
    }
    await fromGoBuild(version, binDir);
    source = "go-build";
  }
  const reported = tryOutput(path.join(binDir, "pulumi"), ["version"]);
  if (reported !== `v${version}`) throw new Error(`provisioned pulumi reports ${reported}, expected v${version}`);
  fs.writeFileSync(
    path.join(binDir, ".provisioned.json"),
    JSON.stringify({
      version,
      source,
      ...(source === "go-build" ? { recipe: GO_BUILD_RECIPE } : {}),
      builtAt: new Date().toISOString(),
    }),
  );
  return source;
}

const USAGE = `usage: npm run pulumi:provision [-- --help]

Provisions the Pulumi CLI at the version of the pinned @pulumi/pulumi and prints its bin folder.
In order: a matching \`pulumi\` on PATH; the cache in ${cacheRoot()}
(set PULUMI_PROXY_CACHE_DIR to move it); the official download; a build from the Go modules with
the machine's Go (1.24+), which takes about 5 minutes once.

A run interrupted by Ctrl-C leaves nothing that blocks the next: its lock is taken over as soon as
its process is gone, and a half-fetched build module is fetched again.`;

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.some((arg) => arg === "--help" || arg === "-h")) {
    process.stdout.write(`${USAGE}\n`);
  } else if (args.length > 0) {
    say(`unknown argument ${args[0]}\n\n${USAGE}`);
    process.exitCode = 1;
  } else {
    provisionPulumi().then(
      (cli) => process.stdout.write(`${cli.binDir}\n`),
      (error) => {
        say(error instanceof Error ? error.message : String(error));
        process.exit(1);
      },
    );
  }
}
