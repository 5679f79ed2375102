import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { cacheRoot } from "../../tools/provision-pulumi.mjs";

/**
 * The Python packages every venv of the suite installs (the pinned `pulumi`, what it and the proxy
 * SDK's wheel require, and the tools Pulumi upgrades in a venv it makes), downloaded from the package
 * index once per machine into a folder that pip then installs from with `PIP_NO_INDEX` and
 * `PIP_FIND_LINKS` (`machineCaches`).
 *
 * Why: pip's own cache keeps nothing on this network. The index is served without any caching
 * header, so pip's HTTP cache stays empty and every `pip install pulumi==…` downloads the index
 * pages again (grpcio's alone is 3.3 MB of HTML to parse) and every wheel: about 21 CPU seconds and
 * a minute of waiting, against 7 and 18 from this folder. The files are the index's own, fetched by
 * pip's resolver from the same requirements, so a venv holds what it would hold online.
 */
const PINNED_PULUMI = require("../../package.json").dependencies["@pulumi/pulumi"] as string;
const REPO_ROOT = path.resolve(__dirname, "..", "..");
/** What the proxy SDK requires: a change to it is a new folder. */
const SDK_SETUP = path.join(REPO_ROOT, "native-sdk", "python", "setup.py");
/**
 * What Pulumi's Python tooling upgrades in every venv it makes (`pip install --upgrade pip setuptools
 * wheel`, in `pulumi install` and `pulumi convert`), at their newest when the folder is filled.
 */
const VENV_TOOLS = ["pip", "setuptools", "wheel"];
const BUILT_WHEEL_DIR = path.join(REPO_ROOT, "dist", "native-sdk", "python");

/**
 * The folder for this machine's python3, filled when missing; undefined where python3 or pip is
 * missing or the index cannot be reached (the installs then go to the index, as before, and fail
 * or pass on their own).
 */
export function ensureWheelhouse(): string | undefined {
  let python: string;
  try {
    python = execFileSync("python3", ["-c", "import sys; print('cp%d%d' % sys.version_info[:2])"], {
      encoding: "utf8",
    }).trim();
  } catch {
    return undefined;
  }
  const requires = createHash("sha256")
    .update(fs.readFileSync(SDK_SETUP))
    .update(VENV_TOOLS.join(" "))
    .digest("hex")
    .slice(0, 12);
  const dir = path.join(cacheRoot(), "wheels", `pulumi-${PINNED_PULUMI}-${python}-${requires}`);
  if (fs.existsSync(dir)) return dir;
  const wheel = fs.readdirSync(BUILT_WHEEL_DIR).find((name) => name.endsWith(".whl"));
  if (!wheel) throw new Error(`${BUILT_WHEEL_DIR} holds no wheel: the build makes it`);
  // Filled beside its final name and renamed: a run killed meanwhile leaves no folder that looks whole.
  const partial = `${dir}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  try {
    execFileSync(
      "python3",
      [
        "-m",
        "pip",
        "download",
        "--quiet",
        "--dest",
        partial,
        `pulumi==${PINNED_PULUMI}`,
        path.join(BUILT_WHEEL_DIR, wheel),
        ...VENV_TOOLS,
      ],
      { stdio: ["ignore", "ignore", "pipe"], timeout: 600_000 },
    );
  } catch (error) {
    fs.rmSync(partial, { recursive: true, force: true });
    process.stderr.write(`[wheelhouse] not filled, venvs install from the index: ${String(error).split("\n")[0]}\n`);
    return undefined;
  }
  // The SDK's wheel is the build's and changes with it: every test names the one it installs.
  for (const name of fs.readdirSync(partial)) if (name.startsWith("pulumi_proxy-")) fs.rmSync(path.join(partial, name));
  try {
    fs.renameSync(partial, dir);
  } catch {
    // Another run filled it first: theirs is as good.
    fs.rmSync(partial, { recursive: true, force: true });
  }
  return dir;
}

/** Where the suite's set-up tells its workers the folder is. */
export const WHEELHOUSE_ENV = "PULUMI_PROXY_WHEELHOUSE";

/** pip's settings that install from the set-up's folder instead of the index; none without one. */
export function wheelhouseEnv(): Record<string, string> {
  const dir = process.env[WHEELHOUSE_ENV];
  if (!dir) return {};
  const machineLinks = process.env.PIP_FIND_LINKS;
  return { PIP_NO_INDEX: "1", PIP_FIND_LINKS: [dir, machineLinks].filter(Boolean).join(" ") };
}
