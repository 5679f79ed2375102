// @ts-check
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Programs inside this repository (tests, the demo, the examples) resolve `pulumi-proxy` the way a
 * user's program does, from node_modules: the dynamic-provider process requires
 * `pulumi-proxy/runtime` from the program's folder. A link to the repository root stands in for
 * the installed package.
 */
export function ensureSelfLink() {
  const link = path.join(repoRoot, "node_modules", "pulumi-proxy");
  const existing = fs.lstatSync(link, { throwIfNoEntry: false });
  if (existing?.isSymbolicLink() && fs.realpathSync(link) === repoRoot) return;
  if (existing) fs.rmSync(link, { recursive: true, force: true });
  fs.symlinkSync(path.relative(path.dirname(link), repoRoot) || ".", link, "dir");
}
