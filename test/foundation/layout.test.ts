import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/pulumi";

const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  exports: Record<string, string | Record<string, string>>;
  files: string[];
  scripts: Record<string, string>;
};

/** Every file an `exports` entry points at. */
const exportTargets = () =>
  Object.values(manifest.exports).flatMap((target) => (typeof target === "string" ? [target] : Object.values(target)));

describe("the rooms' layout", () => {
  it("gives each CLI command of more than one file its own folder, as cli/plan/ has", () => {
    const flat = fs
      .readdirSync(path.join(REPO_ROOT, "cli"), { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
      .map((entry) => entry.name.replace(/\.ts$/, ""));
    // `recover.ts` beside `recoverSteps.ts`: one command spread over the shared folder.
    const spread = flat.filter((name) => flat.some((other) => other !== name && other.startsWith(name)));
    expect(spread, "move these commands' files into cli/<command>/").toEqual([]);
  });

  it("ships nothing that runs at run time from tools/, the build's room; the published subpaths still resolve", () => {
    const fromTools = exportTargets().filter((target) => target.replace(/^\.\//, "").startsWith("tools/"));
    expect(fromTools).toEqual([]);
    // What ships from tools/ is the build npm's `prepare` runs in an installed copy, and what it imports.
    const prepare = /node (tools\/\S+\.mjs)/.exec(manifest.scripts.prepare ?? "")?.[1] ?? "";
    const imported = [...fs.readFileSync(path.join(REPO_ROOT, prepare), "utf8").matchAll(/from "\.\/(\S+\.mjs)"/g)].map(
      (match) => `tools/${match[1]}`,
    );
    expect(manifest.files.filter((file) => file.startsWith("tools/")).sort()).toEqual([prepare, ...imported].sort());
    // Installed launchers and plugins name these subpaths: they keep resolving, to the product's room.
    for (const subpath of ["pulumi-proxy/defer-modules", "pulumi-proxy/engine-watch"]) {
      expect(path.relative(REPO_ROOT, require.resolve(subpath)), subpath).toMatch(/^provider\/process\/[a-z-]+\.cjs$/);
    }
  });
});
