// @ts-check
/**
 * The lock that serializes provisioning on one shared cache (the demo and a test run, or several
 * clones). A lock records its owner, so an owner that died (Ctrl-C, a crash) is noticed at once
 * instead of after the 30-minute age limit, and a waiter says whom it waits for.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const STALE_AFTER_MS = 30 * 60_000;

/** @param {string} message */
function say(message) {
  process.stderr.write(`[pulumi-cli] ${message}\n`);
}

/** @param {number} pid */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return /** @type {NodeJS.ErrnoException} */ (error).code === "EPERM";
  }
}

/** @param {string} lock @returns {{ pid: number, host: string, startedAt: string } | undefined} */
export function readOwner(lock) {
  try {
    return JSON.parse(fs.readFileSync(path.join(lock, "owner.json"), "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * Why the lock may be taken over now, or undefined while its owner may still be working. A lock
 * without an owner file (written by an older version, or caught between mkdir and write) is only
 * judged by its age.
 * @param {string} lock
 */
export function staleReason(lock) {
  const owner = readOwner(lock);
  if (owner && owner.host === os.hostname() && !isAlive(owner.pid)) {
    return `its owner, process ${owner.pid}, is gone`;
  }
  const modified = fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
  if (modified !== undefined && Date.now() - modified > STALE_AFTER_MS) return "it is older than 30 minutes";
  return undefined;
}

/**
 * @template T
 * @param {string} dir
 * @param {() => Promise<T>} work
 * @param {{ progressEveryMs?: number, pollMs?: number }} [options]
 * @returns {Promise<T>}
 */
export async function withLock(dir, work, { progressEveryMs = 15_000, pollMs = 1_000 } = {}) {
  const lock = path.join(dir, ".lock");
  const started = Date.now();
  let lastProgress = started;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(
        path.join(lock, "owner.json"),
        JSON.stringify({ pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() }),
      );
      break;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== "EEXIST") throw error;
      const stale = staleReason(lock);
      if (stale) {
        say(`taking over ${lock}: ${stale}`);
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() - started > STALE_AFTER_MS) throw new Error(`timed out waiting for ${lock}`);
      if (Date.now() - lastProgress >= progressEveryMs) {
        lastProgress = Date.now();
        const owner = readOwner(lock);
        const who = owner ? `process ${owner.pid} (since ${owner.startedAt})` : "another process";
        say(
          `waiting for ${who} to finish provisioning (${Math.round((Date.now() - started) / 1000)} s so far); ` +
            `if nothing is running, remove ${lock}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
  try {
    return await work();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
