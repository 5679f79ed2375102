import { ProxyClient } from "../sdk";
import { SCOPES } from "../sdk/schemas/keys";
import { type Clock, startReferenceServer } from "../server";

/**
 * SDK against the reference server's rate limit: how close to the ceiling does one client get, with
 * how many 429s, compared with a naive client that only waits out retry-after.
 *
 * The server's windows are fixed minutes. A fresh window lets any client burst half its budget, so
 * two scenarios are run:
 * - "fresh window": the run starts as a window opens (the server clock is shifted for that), so the
 *   rate is measured against the ceiling rather than against leftovers of an earlier window.
 * - "crowded window": someone else already spent 80 % of the key's window, which ends in 12 s; here
 *   demand exceeds what is left, which is where pacing and naive retrying part ways.
 */

const LIMIT = 3_000;
const CALLS = 1_500;
const WORKERS = 16;
const USERS = 20;

interface Result {
  label: string;
  elapsedMs: number;
  calls: number;
  rateLimited: number;
  retries: number;
  p50: number;
  p99: number;
  failures: number;
}

/** A clock whose current minute window ends `msLeft` from now. */
function clockEndingWindowIn(msLeft: number): Clock {
  const offset = 60_000 - (Date.now() % 60_000) - msLeft;
  return { now: () => Date.now() + offset };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function run(label: string, pacing: boolean, crowded: boolean): Promise<Result> {
  // Setup and crowding use their own budget or happen before the window of interest.
  const clock = clockEndingWindowIn(crowded ? 14_000 : 59_900);
  const server = await startReferenceServer({ rateLimitPerMinute: LIMIT, clock });
  try {
    const setup = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, pacing: false, maxConcurrency: 16 });
    const users = await Promise.all(
      Array.from({ length: USERS }, (_, i) => setup.proxyUsers.create({ name: `bench-${i}` })),
    );
    const key = server.control.createKey({ name: "bench", scopes: [...SCOPES] });
    if (crowded) {
      const other = new ProxyClient({
        baseUrl: server.url,
        apiKey: key.secret,
        pacing: false,
        maxConcurrency: 32,
        maxRetries: 0,
      });
      await Promise.all(Array.from({ length: Math.floor(LIMIT * 0.8) }, () => other.billing.balance()));
      // Start with 12 s left, whatever the crowding took.
      const left = 60_000 - (clock.now() % 60_000);
      if (left > 12_000) await new Promise((r) => setTimeout(r, left - 12_000));
    } else {
      const wait = 60_000 - (clock.now() % 60_000);
      if (wait < 1_000) await new Promise((r) => setTimeout(r, wait + 20));
    }

    const client = new ProxyClient({ baseUrl: server.url, apiKey: key.secret, pacing, maxRetries: 10 });
    const latencies: number[] = [];
    let next = 0;
    let failures = 0;
    const started = performance.now();
    const worker = async () => {
      for (let i = next++; i < CALLS; i = next++) {
        const user = users[i % USERS]!;
        const t0 = performance.now();
        try {
          if (i % 3 === 0) await client.proxyUsers.update(user.id, { limits: { daily_gb: i % 50, monthly_gb: 1_000 } });
          else await client.proxyUsers.get(user.id);
        } catch {
          failures++;
        }
        latencies.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    const elapsedMs = performance.now() - started;
    latencies.sort((a, b) => a - b);
    return {
      label,
      elapsedMs,
      calls: CALLS,
      rateLimited: client.stats.rateLimited,
      retries: client.stats.retries,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      failures,
    };
  } finally {
    await server.close();
  }
}

function report(r: Result): string {
  const perMinute = (r.calls / r.elapsedMs) * 60_000;
  return [
    r.label.padEnd(30),
    `${(r.elapsedMs / 1000).toFixed(1).padStart(6)} s`,
    `${(perMinute / LIMIT).toFixed(2).padStart(6)} × L`,
    `${String(r.rateLimited).padStart(5)} 429s (${((100 * r.rateLimited) / r.calls).toFixed(2)} %)`,
    `p50 ${r.p50.toFixed(0).padStart(5)} ms`,
    `p99 ${r.p99.toFixed(0).padStart(6)} ms`,
    r.failures > 0 ? `${r.failures} FAILED` : "all ok",
  ].join("  ");
}

export async function benchSdk(): Promise<void> {
  console.log(
    `SDK rate-limit benchmark: L = ${LIMIT}/min per key, ${CALLS} calls (1/3 PATCH, 2/3 GET), ${WORKERS} callers, one client`,
  );
  const results: Result[] = [];
  for (const [label, pacing, crowded] of [
    ["paced, fresh window", true, false],
    ["naive, fresh window", false, false],
    ["paced, crowded window", true, true],
    ["naive, crowded window", false, true],
  ] as const) {
    const r = await run(label, pacing, crowded);
    results.push(r);
    console.log(report(r));
  }
  const paced = results[0]!;
  const rate = (paced.calls / paced.elapsedMs) * 60_000;
  const ok = rate / LIMIT >= 0.95 && paced.rateLimited <= paced.calls * 0.01 && paced.failures === 0;
  console.log(`goal (paced, fresh window: ≥ 0.95 × L with ≤ 1 % 429s): ${ok ? "met" : "NOT met"}`);
}

if (require.main === module) {
  benchSdk().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
