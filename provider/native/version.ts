import fs from "node:fs";
import path from "node:path";
import { type PackageFacts, release } from "./release";

/**
 * What the package's manifest says of it, which the plugin and its schema repeat: the version (the
 * plugin cache folder is named after it), the license, the keywords and the publisher. A release
 * bundle has no manifest beside it, and carries them baked in instead.
 */
export function packageFacts(): PackageFacts {
  if (release) return release;
  // Compiled (dist/provider/native/) or run from source (provider/native/): the manifest is above either way.
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir);
  const { version, license, keywords, author } = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  return { version, license, keywords, author };
}

/** This package's version, which is the plugin's. */
export function packageVersion(): string {
  return packageFacts().version;
}
