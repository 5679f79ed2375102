// @ts-check
/**
 * The bundled plugin as one executable per platform, with no Node.js needed where it runs: Bun
 * compiles the script, with its bytecode (so a start parses nothing), into a copy of its own runtime
 * for the target, which it fetches from the npm registry (`@oven/bun-<os>-<arch>`) the first time.
 * One build machine makes all five: Node's own single executables cannot, as Node has no darwin-arm64
 * binary on the registry past 18.9.0, which predates them.
 *
 * The macOS executables are signed ad hoc (adhocSign.mjs): Bun signs its darwin-arm64 output so,
 * but leaves on its darwin-x64 output the signature of Bun's own binary, which no longer matches.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { signAdHoc } from "./adhocSign.mjs";

const exec = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * @typedef {{ os: "linux" | "darwin" | "windows", arch: "amd64" | "arm64", bunTarget: string }} Platform
 * `os` and `arch` are the engine's names, as plugin tarballs carry them.
 */

/** Every platform a release ships, as Pulumi's registry providers do. @type {readonly Platform[]} */
export const PLATFORMS = [
  { os: "linux", arch: "amd64", bunTarget: "bun-linux-x64" },
  { os: "linux", arch: "arm64", bunTarget: "bun-linux-arm64" },
  { os: "darwin", arch: "amd64", bunTarget: "bun-darwin-x64" },
  { os: "darwin", arch: "arm64", bunTarget: "bun-darwin-arm64" },
  { os: "windows", arch: "amd64", bunTarget: "bun-windows-x64" },
];

/** The platform of this machine, to build for it alone (bench/pluginStart.ts). */
export function hostPlatform() {
  const os = { linux: "linux", darwin: "darwin", win32: "windows" }[/** @type {string} */ (process.platform)];
  const arch = { x64: "amd64", arm64: "arm64" }[/** @type {string} */ (process.arch)];
  const platform = PLATFORMS.find((candidate) => candidate.os === os && candidate.arch === arch);
  if (!platform) throw new Error(`no release platform for ${process.platform}/${process.arch}`);
  return platform;
}

/** An executable's file name on a platform: Windows finds programs by their `.exe`. @param {Platform} platform @param {string} name */
export function executableName(platform, name) {
  return platform.os === "windows" ? `${name}.exe` : name;
}

/**
 * Writes `executable` for `platform` from the bundled `script`.
 * @param {{ script: string, executable: string, platform: Platform }} options
 */
export async function compileExecutable({ script, executable, platform }) {
  // The npm package names its binary bun.exe on every platform.
  const bun = path.join(repoRoot, "node_modules", "bun", "bin", "bun.exe");
  await exec(
    bun,
    ["build", "--compile", "--bytecode", `--target=${platform.bunTarget}`, script, "--outfile", executable],
    {
      cwd: path.dirname(executable),
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  if (platform.os === "darwin") signAdHoc(executable);
  return executable;
}
