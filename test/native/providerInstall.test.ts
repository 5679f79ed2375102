import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, inject, it } from "vitest";
import { pluginCacheDir } from "../../cli/provider/command";
import { outsideFolder } from "../support/outside";
import { REPO_ROOT } from "../support/pulumi";
import { portPrintedWithBarePath } from "./plugin";

const exec = promisify(execFile);
const version = require("../../package.json").version as string;
const cli = path.join(REPO_ROOT, "dist", "cli", "main.js");

/** `npx pulumi-proxy provider install` as a fresh user runs it: a Pulumi home with no plugins folder yet. */
describe("pulumi-proxy provider install", () => {
  const home = outsideFolder();
  afterAll(() => home.cleanup());

  it("puts a launcher in the engine's plugin cache that the engine lists and that starts the plugin", async () => {
    const env = { ...process.env, PULUMI_HOME: home.dir, PULUMI_SKIP_UPDATE_CHECK: "true" };
    const installed = await exec(process.execPath, [cli, "provider", "install"], { env });
    const launcher = path.join(home.dir, "plugins", `resource-proxy-v${version}`, "pulumi-resource-proxy");
    expect(installed.stdout).toContain(launcher);
    expect(fs.statSync(launcher).mode & 0o111).toBe(0o111);
    expect(fs.existsSync(`${path.dirname(launcher)}.partial`)).toBe(false);
    // The plugin is copied whole: nothing the launcher runs lies in the folder the install ran from.
    expect(fs.readdirSync(path.dirname(launcher)).sort()).toEqual([
      "pulumi-resource-proxy",
      "pulumi-resource-proxy.cjs",
    ]);
    expect(fs.readFileSync(launcher, "utf8")).not.toContain(REPO_ROOT);

    const listed = await exec(path.join(inject("pulumiBinDir"), "pulumi"), ["plugin", "ls", "--json"], { env });
    expect(JSON.parse(listed.stdout)).toContainEqual(
      expect.objectContaining({ name: "proxy", kind: "resource", version }),
    );

    // Started as the engine starts a plugin, with no `node` on PATH: it falls back to the node that installed it.
    const port = await portPrintedWithBarePath(launcher);
    expect(port).toMatch(/^\d+$/);
  });

  it("without PULUMI_HOME, uses the account's home as the engine does (Go's user.Current), not $HOME", () => {
    const saved = process.env.HOME;
    process.env.HOME = home.dir;
    try {
      expect(os.homedir()).toBe(home.dir);
      expect(pluginCacheDir({})).toBe(path.join(os.userInfo().homedir, ".pulumi", "plugins"));
    } finally {
      process.env.HOME = saved;
    }
  });

  it("refuses another subcommand and shows its usage", async () => {
    const failed = exec(process.execPath, [cli, "provider", "uninstall"], { env: process.env });
    await expect(failed).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining("expected `install`") });
  });
});
