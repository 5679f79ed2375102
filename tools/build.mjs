// @ts-check
/**
 * The build step of the npm scripts that run compiled code (demo, server, openapi, bench): it compiles
 * only when a source is newer than the last build, and says so, instead of a silent tsc on every run
 * (even `--help`).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const SOURCE_DIRS = ["sdk", "provider", "server", "tools", "demo", "cli", "bench"];
const SOURCE_FILES = ["tsconfig.json", "tsconfig.build.json", "package.json", "package-lock.json"];
export const STAMP = path.join(repoRoot, "dist", ".build-stamp");

/** @param {string} dir @returns {number} */
function newestIn(dir) {
  let newest = 0;
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

/**
 * Compiles into dist/ and stamps it. The stamp's time is taken before compiling, so a source saved
 * during the build counts as newer.
 */
export function build() {
  const stampTime = new Date();
  execFileSync(
    process.execPath,
    [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
    {
      cwd: repoRoot,
      stdio: "inherit",
    },
  );
  fs.writeFileSync(STAMP, "");
  fs.utimesSync(STAMP, stampTime, stampTime);
}

export function buildIfStale() {
  if (distIsFresh()) return false;
  const started = Date.now();
  process.stderr.write("[build] compiling TypeScript into dist/ (sources changed since the last build)\n");
  build();
  process.stderr.write(`[build] done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) buildIfStale();
