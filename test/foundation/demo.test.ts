import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { describe, expect, it, vi } from "vitest";
import { ResourceTally } from "../../demo/support";
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

  it("builds only when a source is newer than dist/, and says when it does", async () => {
    const build = () => promisify(execFile)(process.execPath, [path.join(REPO_ROOT, "tools", "build.mjs")]);
    await build();
    const stamp = path.join(REPO_ROOT, "dist", ".build-stamp");
    const builtAt = fs.statSync(stamp).mtimeMs;
    const again = await build();
    expect(again.stderr).toBe("");
    expect(fs.statSync(stamp).mtimeMs).toBe(builtAt);

    // A source saved after the build makes the next run compile, and say so.
    const source = path.join(REPO_ROOT, "demo", "main.ts");
    const later = new Date(builtAt + 5_000);
    fs.utimesSync(source, later, later);
    const rebuilt = await build();
    expect(rebuilt.stderr).toContain("[build] compiling TypeScript into dist/");
    expect(fs.statSync(stamp).mtimeMs).toBeGreaterThan(builtAt);
  });
});
