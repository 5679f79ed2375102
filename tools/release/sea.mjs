// @ts-check
/**
 * The bundled plugin as a Node single executable application: Node's own SEA support writes the
 * script (with V8's code cache, so a start compiles nothing) into a blob, and postject injects the
 * blob into a copy of the node binary that runs this build. The result needs no Node.js on the
 * machine that runs it. The platform is the build machine's: a release for another OS or
 * architecture is built the same way on a runner of that kind.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The fuse Node looks for to know that a blob was injected (Node's documentation names it). */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** The engine's names for this machine's OS and architecture, as plugin file names carry them. */
export function enginePlatform() {
  const os = { linux: "linux", darwin: "darwin", win32: "windows" }[/** @type {string} */ (process.platform)];
  const arch = { x64: "amd64", arm64: "arm64" }[/** @type {string} */ (process.arch)];
  if (!os || !arch) throw new Error(`no Pulumi plugin platform for ${process.platform}/${process.arch}`);
  return { os, arch };
}

/**
 * Writes `executable` from the bundled `script`, in `workDir` (which keeps the blob and config).
 * @param {{ script: string, executable: string, workDir: string }} options
 */
export async function buildSingleExecutable({ script, executable, workDir }) {
  const blob = path.join(workDir, "sea-prep.blob");
  const config = path.join(workDir, "sea-config.json");
  fs.writeFileSync(
    config,
    JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }),
  );
  await exec(process.execPath, ["--experimental-sea-config", config], { cwd: workDir });
  fs.copyFileSync(process.execPath, executable);
  fs.chmodSync(executable, 0o755);
  // Node as Debian ships it carries its debug symbols: 13 of its 99 MB. Linux only: elsewhere the
  // binary is signed (macOS, Windows) and stripping would break the signature.
  if (process.platform === "linux") await exec("strip", [executable]);
  // postject's own command (its API has no types); it warns about ELF notes it cannot name, harmlessly.
  const postject = path.join(repoRoot, "node_modules", "postject", "dist", "cli.js");
  const macho = process.platform === "darwin" ? ["--macho-segment-name", "NODE_SEA"] : [];
  await exec(process.execPath, [postject, executable, "NODE_SEA_BLOB", blob, "--sentinel-fuse", SEA_FUSE, ...macho]);
  return executable;
}
