import fs from "node:fs";
import path from "node:path";

const PACKAGE = "pulumi-proxy";

/**
 * Makes the serializer store a stub as `require("pulumi-proxy/dist/provider/stubs/…")` however the
 * package is installed. Pulumi's closure serializer looks the stub up in Node's module cache and
 * stores a `require` of it only when its path runs through a node_modules folder; otherwise it
 * serializes the whole closure by value (about 2,500 characters, stored twice per resource and
 * rewritten at every step). A symlinked install (`npm link`, a `file:` folder, npm workspaces, the
 * repository's own self-link) loads the stub by its real path, outside any node_modules. For that
 * case the cache also lists the stub under the link's path, first, so the serializer finds that one.
 */
export function requirableByName(stub: object): void {
  const cache = require.cache;
  const realFile = Object.keys(cache).find((file) => cache[file]?.exports === stub);
  if (realFile === undefined || realFile.split(path.sep).includes("node_modules")) return;
  const link = installedLink(realFile);
  if (link === undefined) return;
  const module = cache[realFile];
  // Object keys keep insertion order, and the serializer takes the first match.
  delete cache[realFile];
  cache[path.join(link.dir, path.relative(link.root, realFile))] = module;
  cache[realFile] = module;
}

/** The `node_modules/pulumi-proxy` above the program's folder that links to the package holding `file`. */
function installedLink(file: string): { dir: string; root: string } | undefined {
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", PACKAGE);
    const root = realpath(candidate);
    if (root !== undefined && file.startsWith(root + path.sep)) return { dir: candidate, root };
    if (path.dirname(dir) === dir) return undefined;
  }
}

function realpath(file: string): string | undefined {
  try {
    return fs.realpathSync(file);
  } catch {
    return undefined;
  }
}
