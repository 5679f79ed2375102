import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { withLock } from "../../tools/cache-lock.mjs";
import { GO_BUILD_RECIPE, goModIsComplete } from "../../tools/go-build.mjs";
import { REPO_ROOT } from "../support/pulumi";

const SCRIPT = path.join(REPO_ROOT, "tools", "provision-pulumi.mjs");
const VERSION: string = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).dependencies[
  "@pulumi/pulumi"
];
const temps: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-provision-"));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** PATH without any pulumi, so the script has to use the cache it is given. */
function pathWithoutPulumi(): string {
  return (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => !fs.existsSync(path.join(dir, "pulumi")))
    .join(path.delimiter);
}

/** A finished cache in `root`, made of links to the suite's real CLI, as a Go build leaves it. */
function finishedCache(root: string): string {
  const realBin = inject("pulumiBinDir");
  const versionDir = path.join(root, `pulumi-${VERSION}`);
  const coreBin = path.join(versionDir, "bin");
  fs.mkdirSync(coreBin, { recursive: true });
  fs.symlinkSync(path.join(realBin, "pulumi"), path.join(coreBin, "pulumi"));
  fs.writeFileSync(
    path.join(coreBin, ".provisioned.json"),
    JSON.stringify({ version: VERSION, source: "go-build", recipe: GO_BUILD_RECIPE }),
  );
  // The language host folder is named after the hash of its sources (tools/language-host, provider/process); the suite's real one has that name.
  const hostBin = path.join(versionDir, "hosts", path.basename(path.dirname(realBin)), "bin");
  fs.mkdirSync(hostBin, { recursive: true });
  // Everything a finished build leaves there (the language host under each name, Python's harness) but pulumi.
  for (const name of fs.readdirSync(realBin).filter((file) => file.startsWith("pulumi-language-"))) {
    fs.symlinkSync(path.join(realBin, name), path.join(hostBin, name));
  }
  return versionDir;
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("provisioning the Pulumi CLI", () => {
  it("--help explains and touches nothing", async () => {
    const cache = tempDir();
    const { stdout } = await promisify(execFile)(process.execPath, [SCRIPT, "--help"], {
      env: { ...process.env, PATH: pathWithoutPulumi(), PULUMI_PROXY_CACHE_DIR: cache },
    });
    expect(stdout).toContain("usage: npm run pulumi:provision");
    expect(stdout).toContain("PULUMI_PROXY_CACHE_DIR");
    expect(fs.readdirSync(cache)).toEqual([]);
  });

  it("takes over at once a lock whose owner process is gone (a Ctrl-C during the first build)", async () => {
    const cache = tempDir();
    const versionDir = finishedCache(cache);
    const pid = deadPid();
    fs.mkdirSync(path.join(versionDir, ".lock"));
    fs.writeFileSync(
      path.join(versionDir, ".lock", "owner.json"),
      JSON.stringify({ pid, host: os.hostname(), startedAt: new Date().toISOString() }),
    );
    // Without the owner check this waits 30 minutes for the lock to age; the test's timeout catches that.
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [SCRIPT], {
      env: { ...process.env, PATH: pathWithoutPulumi(), PULUMI_PROXY_CACHE_DIR: cache },
      timeout: 60_000,
    });
    expect(stderr).toContain(`its owner, process ${pid}, is gone`);
    expect(stdout.trim()).toBe(
      path.join(versionDir, "hosts", path.basename(path.dirname(inject("pulumiBinDir"))), "bin"),
    );
    expect(fs.existsSync(path.join(versionDir, ".lock"))).toBe(false);
  });

  it("says whom it waits for while a live process holds the lock, then proceeds", async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, ".lock"));
    fs.writeFileSync(
      path.join(dir, ".lock", "owner.json"),
      JSON.stringify({ pid: process.pid, host: os.hostname(), startedAt: "2026-01-01T00:00:00Z" }),
    );
    const said: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      said.push(String(chunk));
      return true;
    });
    try {
      const released = new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (said.length >= 2) {
            clearInterval(poll);
            fs.rmSync(path.join(dir, ".lock"), { recursive: true });
            resolve();
          }
        }, 10);
      });
      const result = await withLock(dir, async () => "built", { progressEveryMs: 50, pollMs: 20 });
      await released;
      expect(result).toBe("built");
    } finally {
      spy.mockRestore();
    }
    expect(said[0]).toContain(`waiting for process ${process.pid} (since 2026-01-01T00:00:00Z)`);
    expect(said[0]).toContain(path.join(dir, ".lock"));
  });

  it("treats a go.mod that `go get` never finished as missing, so the module is fetched again", () => {
    const dir = tempDir();
    const modFile = path.join(dir, "go.mod");
    expect(goModIsComplete(modFile)).toBe(false);
    fs.writeFileSync(modFile, "module pulumi-proxy.local/cli-build\n\ngo 1.24\n\nreplace a => b v1.0.0\n");
    expect(goModIsComplete(modFile)).toBe(false);
    fs.appendFileSync(modFile, "\nrequire (\n\tgithub.com/pulumi/pulumi/pkg/v3 v3.248.0\n)\n");
    expect(goModIsComplete(modFile)).toBe(true);
  });

  it("a Go-built CLI parses the password checker's word lists at their first use, and still uses them", () => {
    const bin = inject("pulumiBinDir");
    // The stamp sits in the CLI's own folder: the bin folder itself, or for a Go build the one the
    // language host's folder (<version>/hosts/<hash>/bin) links to; none for a pulumi found on PATH.
    const stampFile = [bin, path.join(bin, "..", "..", "..", "bin")]
      .map((dir) => path.join(dir, ".provisioned.json"))
      .find((file) => fs.existsSync(file));
    const source = stampFile ? JSON.parse(fs.readFileSync(stampFile, "utf8")).source : "path";
    const start = spawnSync(path.join(bin, "pulumi"), ["version"], {
      env: { ...process.env, GODEBUG: "inittrace=1" },
      encoding: "utf8",
    });
    // "init github.com/nbutton23/zxcvbn-go/frequency @9 ms, 0 ms clock, 48 bytes, 1 allocs"
    const parsed = [...start.stderr.matchAll(/zxcvbn-go\/frequency @.*?, (\d+) bytes/g)].map((m) => Number(m[1]));
    expect(parsed).toHaveLength(2);
    // An official binary (PATH or installer) is used as it is, and parses them at start (10 MB each).
    for (const bytes of parsed) expect(bytes < 1_000_000).toBe(source === "go-build");

    const project = tempDir();
    fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: lazy-lists\nruntime: yaml\n");
    const env = {
      ...process.env,
      PULUMI_BACKEND_URL: `file://${project}`,
      PULUMI_HOME: path.join(project, "home"),
      PULUMI_CONFIG_PASSPHRASE: "lazy-lists",
      PULUMI_SKIP_UPDATE_CHECK: "true",
    };
    const pulumi = (...args: string[]) =>
      spawnSync(path.join(bin, "pulumi"), [...args, "--non-interactive"], { cwd: project, env, encoding: "utf8" });
    expect(pulumi("stack", "init", "dev").status).toBe(0);
    const strong = pulumi("config", "set", "apiToken", "Xk9#mQ2$vL8pZr4W");
    expect(strong.status).not.toBe(0);
    expect(strong.stderr).toContain("looks like a secret");
    expect(pulumi("config", "set", "apiToken", "hello").status).toBe(0);
  });
});
