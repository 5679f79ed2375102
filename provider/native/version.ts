import fs from "node:fs";
import path from "node:path";
import { release } from "./release";

/** This package's version, which is the plugin's: the plugin cache folder is named after it. */
export function packageVersion(): string {
  if (release) return release.version;
  // Compiled (dist/provider/native/) or run from source (provider/native/): the manifest is above either way.
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir);
  return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
}
