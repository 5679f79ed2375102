import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { describe, expect, it, vi } from "vitest";
import { ResourceTally } from "../../demo/support";
import { SOURCE_DIRS } from "../../tools/build.mjs";
import { REPO_ROOT } from "../support/pulumi";

function created(type: string, name: string): EngineEvent {
  return {
    sequence: 0,
    timestamp: 0,
    resOutputsEvent: {
      metadata: { op: "create", urn: `urn:pulumi:demo::p::${type}::${name}`, type, provider: "" },
    },
  } as EngineEvent;
}

describe("npm run demo", () => {
  it("counts what it lists: the stack itself is neither listed nor counted", () => {
    const printed: string[] = [];
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    const tally = new ResourceTally();
    try {
      tally.onEvent(created("pulumi:pulumi:Stack", "quickstart-demo"));
      for (const name of ["user", "key", "ip"]) tally.onEvent(created("pulumi-nodejs:dynamic:Resource", name));
    } finally {
      spy.mockRestore();
    }
    expect(printed).toHaveLength(3);
    expect(tally.count("create")).toBe(3);
  });

  it("builds only when a source is newer than dist/, and says when it does (npm run build also when it does not)", async () => {
    // The real build script, copied into a one-file project: it rebuilds the dist/ beside itself, and the
    // repository's own dist/ must not be rewritten while other test files load it.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-build-"));
    try {
      for (const dir of [...SOURCE_DIRS, "dist"]) fs.mkdirSync(path.join(root, dir), { recursive: true });
      for (const script of ["build.mjs", "python-wheel.mjs"]) {
        fs.cpSync(path.join(REPO_ROOT, "tools", script), path.join(root, "tools", script));
      }
      fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(root, "node_modules"), "dir");
      const source = path.join(root, "demo", "main.ts");
      fs.writeFileSync(source, "export const answer: number = 42;\n");
      const tsconfig = {
        compilerOptions: { rootDir: ".", outDir: "dist", module: "commonjs", strict: true },
        include: ["demo"],
      };
      fs.writeFileSync(path.join(root, "tsconfig.build.json"), JSON.stringify(tsconfig));
      const build = (...args: string[]) =>
        promisify(execFile)(process.execPath, [path.join(root, "tools", "build.mjs"), ...args]);

      const first = await build();
      expect(first.stderr).toContain("[build] compiling TypeScript into dist/");
      expect(fs.readFileSync(path.join(root, "dist", "demo", "main.js"), "utf8")).toContain("42");
      const stamp = path.join(root, "dist", ".build-stamp");
      const builtAt = fs.statSync(stamp).mtimeMs;
      const again = await build();
      expect(again.stderr).toBe("");
      // `npm run build` passes --verbose: it says that there was nothing to do, and still does nothing.
      const asked = await build("--verbose");
      expect(asked.stderr).toBe("[build] dist/ is up to date: no source changed since the last build\n");
      expect(fs.statSync(stamp).mtimeMs).toBe(builtAt);

      // A source saved after the build makes the next run compile, and say so.
      fs.writeFileSync(source, "export const answer: number = 43;\n");
      const later = new Date(builtAt + 5_000);
      fs.utimesSync(source, later, later);
      const rebuilt = await build();
      expect(rebuilt.stderr).toContain("[build] compiling TypeScript into dist/");
      expect(fs.statSync(stamp).mtimeMs).toBeGreaterThan(builtAt);
      expect(fs.readFileSync(path.join(root, "dist", "demo", "main.js"), "utf8")).toContain("43");
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
