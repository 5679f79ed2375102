import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { registryAccess } from "./machineCaches";
import { REPO_ROOT } from "./pulumi";

const exec = promisify(execFile);

/**
 * Runs npm as a user would, quietly; a failure carries npm's own output. `--prefer-offline` takes
 * package metadata from npm's cache when it has it (`npm ci` filled it), instead of asking the
 * registry again for each of hundreds of packages: what is installed is the same, in half the time.
 */
export async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await exec("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd,
    maxBuffer: 16 * 1024 * 1024,
    env: registryAccess({ ...process.env, npm_config_update_notifier: "false" }),
  });
  return stdout;
}

/**
 * `npm pack` as a fresh clone runs it: the working tree copied to a temporary folder without dist/, so
 * the tarball holds only what prepack built. The repository's node_modules stands in for `npm ci`; the
 * repository's own dist/ is never touched, since other test files run from it meanwhile.
 */
export async function packFromCleanCopy(into: string): Promise<string> {
  const source = await copyWorkingTree(path.join(into, "source"));
  fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(source, "node_modules"), "dir");
  const packed = JSON.parse(await npm(["pack", "--json", "--pack-destination", into], source)) as {
    filename: string;
  }[];
  return path.join(into, packed[0]?.filename ?? "");
}

/** The working tree's files (tracked, or new and not ignored) that exist: what a fresh clone would hold. */
export async function workingTreeFiles(): Promise<string[]> {
  const { stdout } = await exec("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: REPO_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  // A file deleted in the working tree is still listed as cached.
  return stdout.split("\0").filter((file) => file && fs.existsSync(path.join(REPO_ROOT, file)));
}

async function copyWorkingTree(target: string): Promise<string> {
  for (const file of await workingTreeFiles()) {
    fs.mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
    fs.copyFileSync(path.join(REPO_ROOT, file), path.join(target, file));
  }
  return target;
}

/** A folder outside the repository, which `cleanup` removes. */
export function outsideFolder(): { dir: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-outside-"));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Copies an example's own files (not its node_modules or stack files) into `target`. */
export function copyExample(example: string, target: string): void {
  fs.cpSync(path.join(REPO_ROOT, "examples", example), target, {
    recursive: true,
    filter: (file) => path.basename(file) !== "node_modules" && !/^Pulumi\..+\.yaml$/.test(path.basename(file)),
  });
}
