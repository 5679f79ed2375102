import { execFileSync } from "node:child_process";
import { wheelhouseEnv } from "./wheelhouse";

let found: NodeJS.ProcessEnv | undefined;

/**
 * Go's module and build caches and pip's download cache, where this machine keeps them. A test gives
 * its programs a fresh HOME, and both tools find their caches under HOME: without these, every Go
 * program downloads and compiles the Pulumi Go SDK from nothing (minutes), and every venv downloads
 * grpcio again. A user's machine keeps its caches from one project to the next; so do the tests.
 * pip's cache keeps nothing on this network, so pip also installs from the suite's wheelhouse (wheelhouse.ts).
 */
export function machineCaches(): NodeJS.ProcessEnv {
  if (found) return found;
  found = {};
  try {
    const go = execFileSync("go", ["env", "-json", "GOPATH", "GOMODCACHE", "GOCACHE"], { encoding: "utf8" });
    Object.assign(found, JSON.parse(go) as NodeJS.ProcessEnv);
  } catch {
    // No Go on this machine: the tests that need it say so themselves.
  }
  try {
    const pip = execFileSync("python3", ["-m", "pip", "cache", "dir"], { encoding: "utf8" }).trim();
    if (pip) found.PIP_CACHE_DIR = pip;
  } catch {
    // pip's cache disabled or no pip: every install downloads, as it would for the user.
  }
  Object.assign(found, wheelhouseEnv());
  return found;
}

/** Of those, pip's alone: its cache and the wheelhouse it installs from. */
export function pipSettings(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(machineCaches()).filter((entry): entry is [string, string] => entry[0].startsWith("PIP_")),
  );
}
