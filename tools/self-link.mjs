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
  if (!(existing?.isSymbolicLink() && fs.realpathSync(link) === repoRoot)) {
    if (existing) fs.rmSync(link, { recursive: true, force: true });
    fs.symlinkSync(path.relative(path.dirname(link), repoRoot) || ".", link, "dir");
  }
  ensureBinShim();
}

/**
 * `npx pulumi-proxy` (as the READMEs write it) finds the command in node_modules/.bin, where npm puts
 * an installed package's bin; the self-link is not installed by npm, so the shim is written here.
 */
function ensureBinShim() {
  const shim = path.join(repoRoot, "node_modules", ".bin", "pulumi-proxy");
  const text = '#!/bin/sh\nexec node "$(dirname "$0")/../pulumi-proxy/dist/cli/main.js" "$@"\n';
  if (fs.existsSync(shim) && fs.readFileSync(shim, "utf8") === text) return;
  fs.mkdirSync(path.dirname(shim), { recursive: true });
  fs.writeFileSync(shim, text, { mode: 0o755 });
}
