import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

interface LockedPackage {
  resolved?: string;
  integrity?: string;
}

/**
 * An npm cache that holds exactly the registry tarballs a lockfile names, copied by checksum from
 * this machine's own cache (which the root `npm ci` filled): the stand-in for the public registry
 * when a test installs offline. It holds no package metadata, so `npm ci --offline` works only from a
 * lockfile that records `resolved` and `integrity` for each registry package, and any other request
 * (a name the lockfile does not pin, such as one npm would look up on the registry) fails.
 */
export function npmCacheFor(lockfile: string, cacheDir: string): void {
  const from = path.join(execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim(), "_cacache");
  const packages = JSON.parse(fs.readFileSync(lockfile, "utf8")).packages as Record<string, LockedPackage>;
  const missing: string[] = [];
  for (const [where, locked] of Object.entries(packages)) {
    if (!where || !locked.resolved?.startsWith("http") || !locked.integrity) continue;
    const content = contentPath(locked.integrity);
    if (!fs.existsSync(path.join(from, content))) {
      missing.push(where);
      continue;
    }
    fs.mkdirSync(path.dirname(path.join(cacheDir, "_cacache", content)), { recursive: true });
    fs.copyFileSync(path.join(from, content), path.join(cacheDir, "_cacache", content));
  }
  if (missing.length > 0) {
    throw new Error(
      `${path.relative(process.cwd(), lockfile)} pins packages this machine's npm cache lacks (${missing.join(", ")}). ` +
        "Run `npm ci` at the repository root first; if they are new in the example's lockfile, run `npm install` in a copy of the example once while online.",
    );
  }
}

/** Where cacache keeps content of this checksum: content-v2/<algorithm>/<hex, split 2/2/rest>. */
function contentPath(integrity: string): string {
  const [algorithm, base64] = (integrity.split(/\s+/)[0] ?? "").split(/-(.*)/s);
  const hex = Buffer.from(base64 ?? "", "base64").toString("hex");
  return path.join("content-v2", algorithm ?? "", hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}
