import { execFileSync } from "node:child_process";
import fs from "node:fs";

/**
 * `file`, installed with Debian's `packages` first when it is missing: the tests' tools come from
 * Debian's archive, never from a download of their own (as root, or via sudo).
 */
export function ensureDebianFile(file: string, packages: string[], why: string): string {
  if (fs.existsSync(file)) return file;
  const asRoot = process.getuid?.() === 0;
  const aptGet = (args: string[]) =>
    execFileSync(asRoot ? "apt-get" : "sudo", asRoot ? args : ["-n", "apt-get", ...args], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  const install = `apt-get install -y --no-install-recommends ${packages.join(" ")}`;
  console.error(`[setup] ${file} is missing: installing it (${install})`);
  try {
    aptGet(["update"]);
    aptGet(["install", "-y", "--no-install-recommends", ...packages]);
  } catch (error) {
    throw new Error(
      `${why} need ${file}, and installing it failed (${error instanceof Error ? error.message : String(error)}). Run \`sudo ${install}\`.`,
    );
  }
  if (!fs.existsSync(file)) throw new Error(`apt-get installed ${packages.join(", ")}, but not ${file}`);
  return file;
}

/** Where an arm64 Linux executable runs on this machine: qemu's user mode, with Debian's arm64 C library. */
export const AARCH64 = { qemu: "/usr/bin/qemu-aarch64", sysroot: "/usr/aarch64-linux-gnu" } as const;

export function ensureQemuAarch64(): typeof AARCH64 {
  ensureDebianFile(AARCH64.qemu, ["qemu-user"], "the linux-arm64 release tests");
  ensureDebianFile(
    `${AARCH64.sysroot}/lib/ld-linux-aarch64.so.1`,
    ["libc6-arm64-cross"],
    "the linux-arm64 release tests",
  );
  return AARCH64;
}
