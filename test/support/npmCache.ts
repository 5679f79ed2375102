import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { registryAccess } from "./machineCaches";

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
 *
 * A tarball the example pins but the root lockfile does not (another version of a shared dependency)
 * is fetched into the machine's cache first, by its `resolved` URL, as the registry serves it to a
 * user: on a new machine nothing else has fetched it yet.
 */
export function npmCacheFor(lockfile: string, cacheDir: string): void {
  const from = path.join(execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim(), "_cacache");
  const packages = JSON.parse(fs.readFileSync(lockfile, "utf8")).packages as Record<string, LockedPackage>;
  const pinned = Object.entries(packages).filter((entry): entry is [string, Required<LockedPackage>] =>
    Boolean(entry[0] && entry[1].resolved?.startsWith("http") && entry[1].integrity),
  );
  const absent = () => pinned.filter(([, locked]) => !fs.existsSync(path.join(from, contentPath(locked.integrity))));
  const toFetch = absent();
  if (toFetch.length > 0) {
    // npm keeps each tarball under its own checksum: the check below finds it only where that is the lockfile's.
    execFileSync("npm", ["cache", "add", ...toFetch.map(([, locked]) => locked.resolved)], {
      stdio: "ignore",
      env: registryAccess(),
    });
  }
  const missing = absent().map(([where]) => where);
  if (missing.length > 0) {
    throw new Error(
      `${path.relative(process.cwd(), lockfile)} pins packages that npm could not fetch into this machine's cache ` +
        `(${missing.join(", ")}): the registry serves other content under those names, or is out of reach.`,
    );
  }
  for (const [, locked] of pinned) {
    const content = contentPath(locked.integrity);
    fs.mkdirSync(path.dirname(path.join(cacheDir, "_cacache", content)), { recursive: true });
    fs.copyFileSync(path.join(from, content), path.join(cacheDir, "_cacache", content));
  }
}

/** Where cacache keeps content of this checksum: content-v2/<algorithm>/<hex, split 2/2/rest>. */
function contentPath(integrity: string): string {
  const [algorithm, base64] = (integrity.split(/\s+/)[0] ?? "").split(/-(.*)/s);
  const hex = Buffer.from(base64 ?? "", "base64").toString("hex");
  return path.join("content-v2", algorithm ?? "", hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}
