// @ts-check
/**
 * The generated Python SDK (native-sdk/python) as a wheel in dist/native-sdk/python, so that a user
 * installs it with pip from the installed package (`pip install "$(npx pulumi-proxy sdk python)"`).
 * pip builds it from a copy, because setuptools writes build/ and *.egg-info beside its sources.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SOURCE = path.join(repoRoot, "native-sdk", "python");
const WHEEL_DIR = path.join(repoRoot, "dist", "native-sdk", "python");

/** @param {string} dir @returns {number} */
function newestFile(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** The built wheel's path, if there is one. */
function builtWheel() {
  const name = fs.existsSync(WHEEL_DIR) && fs.readdirSync(WHEEL_DIR).find((file) => file.endsWith(".whl"));
  return name ? path.join(WHEEL_DIR, name) : undefined;
}

/**
 * Builds the wheel when it is missing or older than its sources. Without Python the package still
 * builds (its Node parts need none) and says what it left out, except when packing: a tarball must
 * carry the wheel. @param {{ required: boolean }} options
 */
export function buildPythonWheel({ required }) {
  if (!fs.existsSync(SOURCE)) return;
  const wheel = builtWheel();
  if (wheel && fs.statSync(wheel).mtimeMs >= newestFile(SOURCE)) return;
  try {
    pipWheel(SOURCE, WHEEL_DIR);
  } catch (error) {
    const why = /** @type {Error} */ (error).message;
    if (required) throw new Error(`cannot build the Python SDK's wheel: ${why}`);
    process.stderr.write(`[build] the Python SDK's wheel is not built (${why}); Node programs are unaffected\n`);
  }
}

/**
 * The wheel of the SDK in `source`, written into `wheelDir` (emptied first); the release builds one
 * from the SDK it regenerates. @param {string} source @param {string} wheelDir @returns {string} its path
 */
export function pipWheel(source, wheelDir) {
  const python = process.env.PULUMI_PYTHON_CMD || "python3";
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-wheel-"));
  try {
    fs.cpSync(source, copy, { recursive: true });
    fs.rmSync(wheelDir, { recursive: true, force: true });
    execFileSync(python, ["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", wheelDir, copy], {
      stdio: ["ignore", "ignore", "pipe"],
    });
  } catch (error) {
    throw new Error(
      `${python} -m pip wheel failed: ${String(/** @type {{ stderr?: Buffer }} */ (error).stderr ?? error).trim()}`,
    );
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
  const wheel = fs.readdirSync(wheelDir).find((file) => file.endsWith(".whl"));
  if (!wheel) throw new Error(`${python} -m pip wheel wrote no wheel into ${wheelDir}`);
  return path.join(wheelDir, wheel);
}
