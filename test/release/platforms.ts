import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { expect, inject } from "vitest";
import { ensureQemuAarch64 } from "../../harness/debian";
import type { ProxyClient } from "../../sdk";
import type { ReferenceServer } from "../../server";
import { type ExecutableHeader, machoSignature, readHeader } from "./executableHeaders";
import { credentialsConfig } from "./nodeFree";
import type { ServedRelease } from "./releaseFolder";

const exec = promisify(execFile);

/** The engine's `<os>-<arch>` of every plugin tarball a release holds, in the order a listing sorts them. */
export const PLATFORM_NAMES = ["darwin-amd64", "darwin-arm64", "linux-amd64", "linux-arm64", "windows-amd64"] as const;

const EXPECTED: Record<(typeof PLATFORM_NAMES)[number], ExecutableHeader & { executable: string }> = {
  "darwin-amd64": { format: "macho", arch: "amd64", executable: "pulumi-resource-proxy" },
  "darwin-arm64": { format: "macho", arch: "arm64", executable: "pulumi-resource-proxy" },
  "linux-amd64": { format: "elf", arch: "amd64", executable: "pulumi-resource-proxy" },
  "linux-arm64": { format: "elf", arch: "arm64", executable: "pulumi-resource-proxy" },
  "windows-amd64": { format: "pe", arch: "amd64", executable: "pulumi-resource-proxy.exe" },
};

/** Bun's runtime is most of each executable (about 100 MB, 46 to 60 MB compressed). */
const TARBALL_LIMIT_BYTES = 64 * 1024 * 1024;
const CS_ADHOC = 0x2;

/**
 * Each tarball holds the executable the engine looks for on its platform, whose own headers name
 * that platform; a macOS executable's every page matches its ad-hoc signature, or macOS kills it.
 * Each is unpacked once, into a folder under `root`.
 */
export async function eachPlatformExecutable(release: ServedRelease, root: string): Promise<void> {
  for (const platform of PLATFORM_NAMES) {
    const { executable, ...header } = EXPECTED[platform];
    const tarball = release.file(`-${platform}.tar.gz`);
    expect(fs.statSync(tarball).size, platform).toBeLessThan(TARBALL_LIMIT_BYTES);
    const unpacked = path.join(root, platform);
    fs.mkdirSync(unpacked, { recursive: true });
    await exec("tar", ["-xzf", tarball, "-C", unpacked]);
    const members = fs.readdirSync(unpacked, { recursive: true, encoding: "utf8" }).sort();
    expect(members, platform).toEqual(["LICENSE", executable]);
    const bytes = fs.readFileSync(path.join(unpacked, executable));
    fs.rmSync(unpacked, { recursive: true });
    expect(readHeader(bytes), platform).toEqual(header);
    if (header.format === "macho") {
      const signature = machoSignature(bytes);
      expect(signature, `${platform} carries no code signature`).toBeDefined();
      expect(signature?.flags ?? 0, `${platform}: not ad hoc`).toSatisfy((flags: number) => (flags & CS_ADHOC) !== 0);
      expect(signature, platform).toMatchObject({ mismatchedPages: 0, coversWholeImage: true });
    }
  }
}

/**
 * The linux-arm64 tarball installed as a user installs it, its executable then started by the engine
 * through a wrapper of the same name that runs it under qemu's user mode; a YAML program creates a
 * user with it, in one engine run (`up --skip-preview`): qemu's start is the cost, and what is
 * arm64's own is that the executable starts and serves. Preview and destroy are the same code on
 * every platform, checked on linux-amd64 by the release's language cases and pythonQuickstart.test.ts.
 */
export async function arm64PluginServesAStack(
  release: ServedRelease,
  server: ReferenceServer,
  api: ProxyClient,
  root: string,
): Promise<void> {
  const { qemu, sysroot } = ensureQemuAarch64();
  const app = path.join(root, "app");
  const home = path.join(root, "home");
  fs.mkdirSync(app, { recursive: true });
  fs.mkdirSync(path.join(root, "backend"));
  const env = {
    ...process.env,
    PULUMI_HOME: home,
    PULUMI_BACKEND_URL: `file://${path.join(root, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "arm64",
    PULUMI_SKIP_UPDATE_CHECK: "true",
  };
  const pulumi = (args: string[]) =>
    exec(path.join(inject("pulumiBinDir"), "pulumi"), [...args, "--non-interactive"], { cwd: app, env });
  const tarball = release.file("-linux-arm64.tar.gz");
  await pulumi(["plugin", "install", "resource", "proxy", release.version, "--file", tarball]);

  const pluginDir = path.join(home, "plugins", `resource-proxy-v${release.version}`);
  const executable = path.join(pluginDir, "pulumi-resource-proxy");
  expect(readHeader(fs.readFileSync(executable))).toEqual({ format: "elf", arch: "arm64" });
  fs.renameSync(executable, `${executable}.arm64`);
  // The wrapper notes each start, so that the test knows the engine ran the arm64 executable.
  const starts = path.join(root, "arm64-starts");
  fs.writeFileSync(executable, `#!/bin/sh\necho started >> ${starts}\nexec ${qemu} -L ${sysroot} "$0.arm64" "$@"\n`, {
    mode: 0o755,
  });

  fs.writeFileSync(
    path.join(app, "Pulumi.yaml"),
    [
      "name: arm64-plugin",
      "runtime: yaml",
      "resources:",
      "  scraper:",
      "    type: proxy:index:ProxyUser",
      "    properties:",
      "      name: arm64-under-qemu",
      "    options:",
      `      version: ${release.version}`,
      "outputs:",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a Pulumi YAML interpolation
      "  userId: ${scraper.proxyUserId}",
      "",
    ].join("\n"),
  );
  await pulumi(["stack", "init", "dev"]);
  await pulumi(credentialsConfig(server.url, server.rootKey));
  expect((await pulumi(["up", "--yes", "--skip-preview"])).stdout).toMatch(/\+ 2 created/);
  const userId = (await pulumi(["stack", "output", "userId"])).stdout.trim();
  expect(await api.proxyUsers.get(userId)).toMatchObject({ name: "arm64-under-qemu" });
  expect(fs.readFileSync(starts, "utf8")).toContain("started");
}
