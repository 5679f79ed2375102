import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import { registryAccess } from "../support/machineCaches";
import { workingTreeFiles } from "../support/outside";
import { REPO_ROOT } from "../support/pulumi";
import { RELEASES_DIR } from "./serveReleases";

const exec = promisify(execFile);

/** Named in the schema only: nothing fetches it. */
const RELEASE_REPOSITORY = "https://github.com/example/pulumi-proxy";

/** The release folder served over loopback HTTP, as a release page serves it. */
export interface ServedRelease {
  dir: string;
  version: string;
  /** The URL the SDKs carry: the release fills in `${VERSION}`, so that `pulumi import` can write code. */
  pluginDownloadURL: string;
  /** Where the folder's files are served: the download URL with the version filled in. */
  baseUrl: string;
  /** The repository the release names (`--repository`). */
  repository: string;
  /** Paths requested so far under `/releases/`, in order, by every test file that shares this build. */
  requests(): Promise<string[]>;
  file(suffix: string): string;
}

/**
 * The files a release is built from (the working tree but the tests) and the server's address, which
 * the build writes into every SDK: a build is reused while these are the same.
 */
async function releaseKey(server: string): Promise<string> {
  const hash = createHash("sha256").update(`${server}\n`);
  for (const file of (await workingTreeFiles()).filter((name) => !name.startsWith("test/")).sort()) {
    hash.update(`${file}\n`).update(fs.readFileSync(path.join(REPO_ROOT, file)));
  }
  return hash.digest("hex").slice(0, 16);
}

/**
 * `npm run release` as a maintainer runs it, once for every test file that needs it: the first builds
 * into `.pulumi-proxy/releases/<key>` while holding `<key>.lock`, each other waits for the folder and
 * reuses it, and so does the next run while no source has changed. The download URL names the soak
 * tier's release server (serveReleases.ts), which serves the folder as a release page would.
 */
export async function sharedRelease(): Promise<ServedRelease> {
  const server = inject("releaseServer");
  const key = await releaseKey(server);
  const version = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version as string;
  const downloadUrl = `${server}/${key}/releases/v${version}/`;
  const dir = path.join(RELEASES_DIR, key);
  await builtOnce(dir, () => build(dir, `${server}/${key}/releases/v\${VERSION}/`));
  return {
    dir,
    version,
    pluginDownloadURL: downloadUrl,
    repository: RELEASE_REPOSITORY,
    baseUrl: downloadUrl,
    requests: async () => (await (await fetch(`${server}/${key}/requests`)).json()) as string[],
    file(suffix) {
      const name = fs.readdirSync(dir).find((entry) => entry.endsWith(suffix));
      if (!name) throw new Error(`the release folder ${dir} holds no *${suffix}: ${fs.readdirSync(dir).join(", ")}`);
      return path.join(dir, name);
    },
  };
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The pid in a lock file; 0 while its builder is writing it, or once that builder is done and removed it. */
function lockHolder(lock: string): number {
  try {
    return Number(fs.readFileSync(lock, "utf8").trim());
  } catch {
    return 0;
  }
}

/**
 * Runs `build` unless `done` exists, one builder at a time across the suite's processes (the lock is
 * `<done>.lock`); a lock whose process is gone is taken over. `build` must create `done` last.
 */
export async function builtOnce(done: string, build: () => Promise<void>): Promise<void> {
  const lock = `${done}.lock`;
  fs.mkdirSync(path.dirname(done), { recursive: true });
  for (;;) {
    if (fs.existsSync(done)) return;
    try {
      fs.writeFileSync(lock, `${process.pid}\n`, { flag: "wx" });
    } catch {
      const holder = lockHolder(lock);
      if (holder && !isAlive(holder)) fs.rmSync(lock, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 2_000));
      continue;
    }
    try {
      if (!fs.existsSync(done)) await build();
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }
}

async function build(dir: string, requestedDownloadURL: string): Promise<void> {
  const partial = `${dir}.partial`;
  const args = ["--plugin-download-url", requestedDownloadURL, "--repository", RELEASE_REPOSITORY, "--out", partial];
  await exec("npm", ["run", "--silent", "release", "--", ...args], {
    cwd: REPO_ROOT,
    env: registryAccess(),
    maxBuffer: 16 * 1024 * 1024,
  });
  fs.renameSync(partial, dir);
  // Earlier builds are of other sources or another port, and so is what was made beside them (a
  // `<key>-python` virtual environment): nothing reuses them.
  for (const entry of fs.readdirSync(RELEASES_DIR)) {
    const built = /^([0-9a-f]{16})(-[a-z]+)?$/.exec(entry);
    if (built && built[1] !== path.basename(dir)) {
      fs.rmSync(path.join(RELEASES_DIR, entry), { recursive: true, force: true });
    }
  }
}
