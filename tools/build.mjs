// @ts-check
/**
 * Every build of dist/ goes through here: `npm run build`, npm's `prepare` (after `npm ci`, or in a
 * git-URL install) and `prepack`, the npm scripts that run compiled code (demo, server, openapi,
 * bench), and the suite's global setup. It compiles only when a source is newer than the last build,
 * and says so, instead of a silent tsc on every run (even `--help`). Skipping a fresh build also keeps
 * dist/ from being rewritten under processes that are loading it: the suite runs the examples'
 * `npm run build` while engine tests load dist/.
 *
 *   node tools/build.mjs            compile if stale
 *   node tools/build.mjs --verbose  the same, and say so when there is nothing to do (`npm run build`)
 *   node tools/build.mjs --pack     always: an empty dist/, no source maps (their .ts files do not
 *                                   ship); the stamp then keeps `prepare`, which npm runs right after
 *                                   `prepack`, from compiling it all again with maps
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildPythonWheel } from "./python-wheel.mjs";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const SOURCE_DIRS = [
  "contract",
  "sdk",
  "provider",
  "policy",
  "server",
  "tools",
  "harness",
  "demo",
  "cli",
  "bench",
  // Not all of docs/: the rest is Markdown, and `npm run gen-docs` recreating docs/reference/ would
  // make the next build stale (a folder's time counts, see newestIn).
  "docs/generate",
  "native-sdk",
];
const SOURCE_FILES = ["tsconfig.json", "tsconfig.build.json", "package.json", "package-lock.json"];
export const STAMP = path.join(repoRoot, "dist", ".build-stamp");

/**
 * The newest change below `dir`: its .ts files, and the folders themselves, whose time moves when a
 * file is added, removed or renamed (a renamed file keeps its own time).
 * @param {string} dir @returns {number}
 */
function newestIn(dir) {
  let newest = fs.statSync(dir, { throwIfNoEntry: false })?.mtimeMs;
  if (newest === undefined) return 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestIn(full));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

export function distIsFresh() {
  const built = fs.statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return false;
  const newest = Math.max(
    ...SOURCE_DIRS.map((dir) => newestIn(path.join(repoRoot, dir))),
    ...SOURCE_FILES.map((file) => fs.statSync(path.join(repoRoot, file), { throwIfNoEntry: false })?.mtimeMs ?? 0),
  );
  return built >= newest;
}

/** What tsc writes for one source file `x.ts`: the script, its declarations, and their maps. */
const COMPILED = /\.(js|d\.ts)(\.map)?$/;

/**
 * Deletes what tsc wrote for a source that is gone. tsc never removes outputs, and a moved module
 * would otherwise keep its old compiled file beside the new one, where `require("../kinds")` still
 * finds the stale `kinds.js` before `kinds/index.js`.
 * @param {string} dir a folder of dist/ @param {string} sourceDir the source folder it compiles
 */
function pruneOrphansIn(dir, sourceDir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      pruneOrphansIn(full, path.join(sourceDir, entry.name));
      if (fs.readdirSync(full).length === 0) fs.rmdirSync(full);
    } else if (COMPILED.test(entry.name)) {
      const stem = entry.name.replace(COMPILED, "");
      if (!fs.existsSync(path.join(sourceDir, `${stem}.ts`))) fs.rmSync(full);
    }
  }
}

function pruneOrphans() {
  for (const dir of SOURCE_DIRS.filter((name) => name !== "native-sdk")) {
    const compiled = path.join(repoRoot, "dist", dir);
    if (fs.existsSync(compiled)) pruneOrphansIn(compiled, path.join(repoRoot, dir));
  }
}

/**
 * Compiles into dist/ and stamps it. The stamp's time is taken before compiling, so a source saved
 * during the build counts as newer.
 * @param {{ forPack?: boolean }} [options]
 */
export async function build({ forPack = false } = {}) {
  const stampTime = new Date();
  if (forPack) fs.rmSync(path.join(repoRoot, "dist"), { recursive: true, force: true });
  const tsc = path.join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  const args = [tsc, "-p", "tsconfig.build.json", ...(forPack ? ["--sourceMap", "false"] : [])];
  execFileSync(process.execPath, args, { cwd: repoRoot, stdio: "inherit" });
  pruneOrphans();
  buildNodeAndGoSdks(tsc, forPack);
  buildPythonWheel({ required: forPack });
  await bundleInstalledPlugin();
  fs.writeFileSync(STAMP, "");
  fs.utimesSync(STAMP, stampTime, stampTime);
}

/**
 * The generated Node SDK (`pulumi-proxy/native`) compiles with the tsconfig its generator wrote, as
 * upstream builds its SDKs, beside the manifest it reads its version from; the Go SDK is copied.
 * @param {string} tsc @param {boolean} forPack
 */
function buildNodeAndGoSdks(tsc, forPack) {
  const source = path.join(repoRoot, "native-sdk", "nodejs");
  const target = path.join(repoRoot, "dist", "native-sdk", "nodejs");
  // Only `npm run gen-sdks` on a checkout without the generated code gets here without it.
  if (!fs.existsSync(source)) return process.stderr.write("[build] no native-sdk/nodejs yet: run npm run gen-sdks\n");
  const noMaps = forPack ? ["--sourceMap", "false", "--declarationMap", "false"] : [];
  execFileSync(process.execPath, [tsc, "-p", source, "--outDir", target, ...noMaps], {
    cwd: repoRoot,
    stdio: "inherit",
  });
  fs.copyFileSync(path.join(source, "package.json"), path.join(target, "package.json"));
  // The Go SDK ships as source: a program's go.mod replaces its module with this copy.
  const goSource = path.join(repoRoot, "native-sdk", "go");
  const goTarget = path.join(repoRoot, "dist", "native-sdk", "go");
  fs.rmSync(goTarget, { recursive: true, force: true });
  if (fs.existsSync(goSource)) fs.cpSync(goSource, goTarget, { recursive: true });
}

/**
 * The plugin as one script, dist/plugin/pulumi-resource-proxy.cjs, which `pulumi-proxy provider
 * install` copies into the plugin cache: it needs nothing from the folder it was installed from.
 * esbuild is a development dependency, loaded only here: the packed package ships this file too.
 */
async function bundleInstalledPlugin() {
  // A copy of this script in a project without the plugin (the build's own test) has nothing to bundle.
  if (!fs.existsSync(path.join(repoRoot, "provider", "native", "standalone.ts"))) return;
  const { bundlePlugin } = await import("./release/bundle.mjs");
  const outfile = path.join(repoRoot, "dist", "plugin", "pulumi-resource-proxy.cjs");
  await bundlePlugin({ outfile });
}

/** @param {{ verbose?: boolean }} [options] */
export async function buildIfStale({ verbose = false } = {}) {
  // The packed package ships this script (its `prepare` names it) but no sources: dist/ is the build.
  if (!fs.existsSync(path.join(repoRoot, "tsconfig.build.json"))) return false;
  if (distIsFresh()) {
    if (verbose) process.stderr.write("[build] dist/ is up to date: no source changed since the last build\n");
    return false;
  }
  const started = Date.now();
  const why = fs.existsSync(STAMP) ? "sources changed since the last build" : "no build yet";
  process.stderr.write(`[build] compiling TypeScript into dist/ (${why})\n`);
  await build();
  process.stderr.write(`[build] done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--pack")) await build({ forPack: true });
  else await buildIfStale({ verbose: process.argv.includes("--verbose") });
}
