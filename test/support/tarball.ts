import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { withLock } from "../../tools/cache-lock.mjs";
import { outsideFolder, packFromCleanCopy, workingTreeFiles } from "./outside";
import { REPO_ROOT } from "./pulumi";

const TARBALLS = path.join(REPO_ROOT, ".pulumi-proxy", "tarballs");

/**
 * The package as `npm pack` of a fresh clone of this working tree makes it, packed once: the first
 * test file to ask packs it (about 30 s) under a lock, the others, in any worker, wait and get the
 * same file. It is kept under `.pulumi-proxy/tarballs/<hash of the working tree>/`, so a later run
 * with no file but the tests changed packs nothing; an older pack is removed when a new one is made.
 */
export async function packedTarball(): Promise<string> {
  fs.mkdirSync(TARBALLS, { recursive: true });
  const dir = path.join(TARBALLS, await workingTreeHash());
  return withLock(
    TARBALLS,
    async () => {
      const existing = fs.existsSync(dir) ? fs.readdirSync(dir).find((file) => file.endsWith(".tgz")) : undefined;
      if (existing) return path.join(dir, existing);
      const scratch = outsideFolder();
      try {
        const packed = await packFromCleanCopy(scratch.dir);
        for (const old of fs.readdirSync(TARBALLS)) fs.rmSync(path.join(TARBALLS, old), { recursive: true });
        fs.mkdirSync(dir);
        fs.copyFileSync(packed, path.join(dir, path.basename(packed)));
        return path.join(dir, path.basename(packed));
      } finally {
        scratch.cleanup();
      }
    },
    // The lock's progress lines speak of provisioning; a pack takes well under this.
    { progressEveryMs: 10 * 60_000 },
  );
}

/**
 * Every file a fresh clone would hold but the tests, by path and content: the build compiles none of
 * test/ and the package ships none of it, so a change to a test packs nothing again.
 */
async function workingTreeHash(): Promise<string> {
  const hash = createHash("sha256");
  for (const file of (await workingTreeFiles()).filter((name) => !name.startsWith("test/")).sort()) {
    hash.update(`${file}\0`);
    hash.update(fs.readFileSync(path.join(REPO_ROOT, file)));
  }
  return hash.digest("hex").slice(0, 16);
}
