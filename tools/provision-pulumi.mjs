// @ts-check
/**
 * Provisions the Pulumi CLI at exactly the version of the pinned @pulumi/pulumi package, because the
 * Automation API and the engine must agree. Called by the test setup and the demo, never by npm install.
 *
 * In order: a `pulumi` on PATH with that version; the official installer (abandoned fast when its
 * host is unreachable); a build from the Go modules with the machine's `go`, cached outside the
 * repository so that only the first run pays for it.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const languageHostSource = path.join(repoRoot, "tools", "language-host", "main.go");
const OFFICIAL_HOST = "https://get.pulumi.com";
const MIN_GO = [1, 24];

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

/** @param {string} file */
function sha256(file) {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex").slice(0, 16);
}

/** @param {string} command @param {string[]} args */
function tryOutput(command, args) {
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

/** The CLI runs dynamic providers through this script, which ships inside @pulumi/pulumi. @param {string} binDir */
function installDynamicProviderShim(binDir) {
  const shim = path.join(repoRoot, "node_modules", "@pulumi", "pulumi", "pulumi-resource-pulumi-nodejs");
  if (!fs.existsSync(shim)) throw new Error(`${shim} is missing: run npm install first`);
  const target = path.join(binDir, "pulumi-resource-pulumi-nodejs");
  fs.copyFileSync(shim, target);
  fs.chmodSync(target, 0o755);
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
  if (stamp.source === "go-build" && stamp.languageHost !== sha256(languageHostSource)) return false;
  return ["pulumi", "pulumi-language-nodejs"].every((name) => fs.existsSync(path.join(binDir, name)));
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

function goVersionProblem() {
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

/** @param {string} version @param {string} binDir */
async function fromGoBuild(version, binDir) {
  const buildDir = path.join(path.dirname(binDir), "build");
  fs.mkdirSync(path.join(buildDir, "language-host"), { recursive: true });
  const env = {
    ...process.env,
    GOFLAGS: "-mod=mod",
    // The checksum database has no entries for these module versions on this kind of network.
    GONOSUMDB: [process.env.GONOSUMDB, "github.com/pulumi/pulumi"].filter(Boolean).join(","),
  };
  const modFile = path.join(buildDir, "go.mod");
  if (!fs.existsSync(modFile)) {
    say(`fetching github.com/pulumi/pulumi/pkg/v3@v${version} from the Go module proxy`);
    const replaces = upstreamReplaceLines(version, /** @type {Record<string,string>} */ (env));
    fs.writeFileSync(modFile, ["module pulumi-proxy.local/cli-build", "", "go 1.24", "", ...replaces, ""].join("\n"));
    await run(
      ["get", `github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@v${version}`, `github.com/pulumi/pulumi/sdk/v3@v${version}`],
      buildDir,
      /** @type {Record<string,string>} */ (env),
    );
  }
  fs.copyFileSync(languageHostSource, path.join(buildDir, "language-host", "main.go"));
  const stampVersion = (/** @type {string} */ pkg) => `-s -w -X ${pkg}=v${version}`;
  if (!fs.existsSync(path.join(binDir, "pulumi"))) {
    say(`compiling pulumi v${version} (the first build takes several minutes)`);
    await run(
      [
        "build",
        "-trimpath",
        "-ldflags",
        stampVersion("github.com/pulumi/pulumi/sdk/v3/go/common/version.Version"),
        "-o",
        path.join(binDir, "pulumi"),
        "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi",
      ],
      buildDir,
      /** @type {Record<string,string>} */ (env),
    );
  }
  say("compiling pulumi-language-nodejs");
  await run(
    [
      "build",
      "-trimpath",
      "-ldflags",
      stampVersion("main.version"),
      "-o",
      path.join(binDir, "pulumi-language-nodejs"),
      "./language-host",
    ],
    buildDir,
    /** @type {Record<string,string>} */ (env),
  );
}

/**
 * Serializes concurrent provisioning (for example the demo and a test run) on one cache.
 * @template T @param {string} dir @param {() => Promise<T>} work @returns {Promise<T>}
 */
async function withLock(dir, work) {
  const lock = path.join(dir, ".lock");
  const started = Date.now();
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 30 * 60_000) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() - started > 30 * 60_000) throw new Error(`timed out waiting for ${lock}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  try {
    return await work();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** @returns {Promise<ProvisionedCli>} */
export async function provisionPulumi() {
  const version = pinnedVersion();
  const started = Date.now();
  const onPathDir = fromPath(version);
  if (onPathDir) return { binDir: onPathDir, version, source: "path" };

  const versionDir = path.join(cacheRoot(), `pulumi-${version}`);
  const binDir = path.join(versionDir, "bin");
  fs.mkdirSync(binDir, { recursive: true });
  return withLock(versionDir, async () => {
    if (cacheIsComplete(binDir, version)) {
      installDynamicProviderShim(binDir);
      return { binDir, version, source: /** @type {const} */ ("cache") };
    }
    say(`provisioning pulumi v${version} into ${binDir}`);
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
    installDynamicProviderShim(binDir);
    const reported = tryOutput(path.join(binDir, "pulumi"), ["version"]);
    if (reported !== `v${version}`) throw new Error(`provisioned pulumi reports ${reported}, expected v${version}`);
    fs.writeFileSync(
      path.join(binDir, ".provisioned.json"),
      JSON.stringify({ version, source, languageHost: sha256(languageHostSource), builtAt: new Date().toISOString() }),
    );
    say(`pulumi v${version} ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${source})`);
    return { binDir, version, source };
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  provisionPulumi().then(
    (cli) => process.stdout.write(`${cli.binDir}\n`),
    (error) => {
      say(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
