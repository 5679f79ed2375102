import { fork } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Pool } from "undici";
import { startInChildProcess, type Target } from "./server";

/** Issue 44's goal: a thousand console streams, one never reading, cost the API little and the server little. */
export const CONSOLE_STREAM_FLOORS = { streams: 1000, p99Ratio: 1.2, rssMiB: 300 };

/** Users on the account before the streams open: each stream's first frame lists them all. */
const SEED_USERS = 5000;
const WRITE_SECONDS = 10;

const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

interface WritePhase {
  requests: number;
  p99: number;
  peakRssMiB: number;
}

/**
 * One client writing as fast as the server answers, one request at a time, for WRITE_SECONDS: a
 * proxy user created, then deleted, so the account stays the same size and every write is a change
 * every stream must hear of. The server's RSS is sampled every 100 ms.
 */
async function writes(target: Target, pool: Pool): Promise<WritePhase> {
  const headers = { authorization: `Bearer ${target.rootKey}`, "content-type": "application/json" };
  const latencies: number[] = [];
  let peakRssMiB = 0;
  const sampler = setInterval(() => {
    if (target.pid) peakRssMiB = Math.max(peakRssMiB, rssMiB(target.pid));
  }, 100);
  const timed = async (method: "POST" | "DELETE", url: string, body?: string) => {
    const started = performance.now();
    const answer = await pool.request({ method, path: url, headers, ...(body ? { body } : {}) });
    const text = await answer.body.text();
    latencies.push(performance.now() - started);
    return text;
  };
  const end = performance.now() + WRITE_SECONDS * 1000;
  for (let i = 0; performance.now() < end; i++) {
    const created = JSON.parse(
      await timed("POST", "/v1/proxy-users", JSON.stringify({ name: `w-${i}-${Date.now()}` })),
    );
    await timed("DELETE", `/v1/proxy-users/${created.id}`);
  }
  clearInterval(sampler);
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0, peakRssMiB };
}

/**
 * The console's event streams under load (issue 44): the built server in its own process, an account
 * of SEED_USERS users, and one client writing. First with no stream open, then with a thousand open
 * from another process, one of which never reads. Compared: the writes' p99 and the server's RSS.
 */
export async function benchConsoleStreams(): Promise<void> {
  const target = await startInChildProcess(path.join(__dirname, "..", "server", "cli.js"));
  const pool = new Pool(target.url, { connections: 1 });
  const headers = { authorization: `Bearer ${target.rootKey}`, "content-type": "application/json" };
  try {
    for (let start = 0; start < SEED_USERS; start += 100) {
      const batch = Array.from({ length: 100 }, (_, i) =>
        fetch(`${target.url}/v1/proxy-users`, {
          method: "POST",
          headers,
          body: JSON.stringify({ name: `seed-${start + i}` }),
        }),
      );
      await Promise.all(batch);
    }
    const page = await fetch(`${target.url}/`);
    const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const pid = target.pid ?? 0;
    const idleRss = rssMiB(pid);
    const quiet = await writes(target, pool);

    const count = CONSOLE_STREAM_FLOORS.streams;
    const readers = fork(path.join(__dirname, "consoleReaders.js"), [target.url, cookie, String(count)]);
    await new Promise((resolve) => readers.once("message", resolve));
    const openRss = rssMiB(pid);
    const loaded = await writes(target, pool);
    readers.send("report");
    const { closedByServer } = await new Promise<{ closedByServer: number }>((resolve) =>
      readers.once("message", resolve),
    );
    readers.disconnect();

    const f = CONSOLE_STREAM_FLOORS;
    const ratio = loaded.p99 / quiet.p99;
    const verdict = (ok: boolean) => (ok ? "within" : "OVER");
    console.log(`console streams: ${SEED_USERS} users, one client creating and deleting a user for ${WRITE_SECONDS} s`);
    console.log(
      `  no stream       ${quiet.requests} requests, p99 ${quiet.p99.toFixed(2)} ms, RSS ${idleRss.toFixed(0)} MiB idle, peak ${quiet.peakRssMiB.toFixed(0)} MiB`,
    );
    console.log(
      `  ${count} streams  ${loaded.requests} requests, p99 ${loaded.p99.toFixed(2)} ms, RSS ${openRss.toFixed(0)} MiB once open, peak ${loaded.peakRssMiB.toFixed(0)} MiB; closed by the server ${closedByServer} (the one that never reads, once its queue passes its allowance)`,
    );
    console.log(`  p99 ratio       ${ratio.toFixed(2)}  (goal < ${f.p99Ratio}: ${verdict(ratio < f.p99Ratio)})`);
    console.log(
      `  peak RSS        ${loaded.peakRssMiB.toFixed(0)} MiB  (goal < ${f.rssMiB} MiB: ${verdict(loaded.peakRssMiB < f.rssMiB)})`,
    );
  } finally {
    await pool.close();
    await target.stop();
  }
}
