import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../cli/commands";
import { TOOL_ARGUMENTS } from "../../cli/toolArguments";
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
  it("lays every CLI command out the same way: a folder with command.ts, listed once in the command table", async () => {
    const cli = path.join(REPO_ROOT, "cli");
    const entries = fs.readdirSync(cli, { withFileTypes: true });
    const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(COMMANDS.map((command) => command.name).sort(), "the table lists each folder of cli/, once").toEqual(
      folders.sort(),
    );
    for (const folder of folders) {
      const entry = path.join(cli, folder, "command.ts");
      expect(fs.existsSync(entry), `cli/${folder}/command.ts`).toBe(true);
      const { command } = await import(entry);
      expect(command?.name, `cli/${folder}/command.ts exports its command`).toBe(folder);
      expect(COMMANDS, `cli/${folder} is in cli/commands.ts`).toContain(command);
      for (const line of command.usage)
        expect(line, `cli/${folder}'s usage`).toMatch(new RegExp(`^pulumi-proxy ${folder}\\b`));
    }
    // A command written as a flat file of cli/ (its usage text beside the shared helpers) is outside the shape.
    const flatCommands = entries
      .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
      .filter((entry) => /usage: pulumi-proxy [a-z]/.test(fs.readFileSync(path.join(cli, entry.name), "utf8")))
      .map((entry) => entry.name);
    expect(flatCommands, "move these commands into cli/<command>/command.ts").toEqual([]);
  });

  it("makes the release executable the tool for exactly the table's commands, and its help and version flags", () => {
    const flags = ["help", "--help", "-h", "--version", "-v"];
    expect([...TOOL_ARGUMENTS].sort()).toEqual([...COMMANDS.map((command) => command.name), ...flags].sort());
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
