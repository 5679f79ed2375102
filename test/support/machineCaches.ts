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

/**
 * What vitest.config.mts gives every process the suite starts to make it cheaper, never different
 * (the V8 code cache, GOGC, no extra CA file to parse), for a test that builds a machine's
 * environment from nothing.
 */
export function suiteSpeedSettings(): Record<string, string> {
  const names = ["NODE_OPTIONS", "PULUMI_PROXY_CODE_CACHE_DIR", "GOGC", "NODE_EXTRA_CA_CERTS"];
  return Object.fromEntries(
    names.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name] as string]])),
  );
}

/**
 * The worker's environment with the machine's NODE_EXTRA_CA_CERTS back (vitest.config.mts leaves it
 * out of the suite's processes), for the processes that reach a package registry: npm fetching a
 * package or its metadata, the release's Bun fetching a target's runtime. Behind a proxy that
 * re-signs TLS, they need that file.
 */
export function registryAccess(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const machine = process.env.PULUMI_PROXY_MACHINE_EXTRA_CA_CERTS;
  return machine ? { ...env, NODE_EXTRA_CA_CERTS: machine } : env;
}
