import { ProxyClient } from "../sdk";
import type { RateGate } from "../sdk/core/pacer";
import { Transport } from "../sdk/core/transport";
import { ProxyUsers } from "../sdk/resources/proxyUsers";
import { type Clock, startReferenceServer } from "../server";
import { freshWindow, WINDOW_MS, type WindowAtStart, windowFloorSeconds } from "./floors";
import { WindowClock } from "./harness";
import { LegacyPacer } from "./legacyPacer";

/**
 * N proxy-user creates through one SDK client against the reference server at 600 a minute, with
 * today's pacer and with the one before issue 12 (even spreading), against the same floor:
 * max(the same creates on an unlimited server, the window floor of floors.ts).
 */

const LIMIT = 600;
const CALLERS = 16;
/** Share of the window another client of the key has spent in the crowded case, and what is left of it then. */
const CROWDED_SHARE = 0.8;
const CROWDED_WINDOW_LEFT_MS = 30_000;

interface SdkCase {
  label: string;
  calls: number;
  crowded: boolean;
}

const CASES: SdkCase[] = [
  { label: "fresh window, 500 creates", calls: 500, crowded: false },
  { label: "fresh window, 900 creates", calls: 900, crowded: false },
  { label: "crowded window, 300 creates", calls: 300, crowded: true },
];

type Schedule = "new" | "old" | "unlimited";

interface Run {
  seconds: number;
  /** The window floor for this run's calls, from the budget and time it found at its start. */
  windowFloor: number;
  rateLimited: number;
  otherRateLimited: number;
  window: WindowAtStart;
  failures: number;
}

/** A clock whose current minute window ends `msLeft` from now. */
function clockEndingWindowIn(msLeft: number): Clock {
  const offset = WINDOW_MS - (Date.now() % WINDOW_MS) - msLeft;
  return { now: () => Date.now() + offset };
}

async function run(c: SdkCase, schedule: Schedule): Promise<Run> {
  const fresh = new WindowClock();
  const clock = c.crowded ? clockEndingWindowIn(CROWDED_WINDOW_LEFT_MS + 2_000) : fresh;
  const limit = schedule === "unlimited" ? 1_000_000_000 : LIMIT;
  const server = await startReferenceServer({ rateLimitPerMinute: limit, clock, balanceCents: 100_000_000 });
  try {
    let otherRateLimited = 0;
    let window = freshWindow(limit);
    if (c.crowded) {
      const other = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, maxConcurrency: 16 });
      const spent = Math.floor(LIMIT * CROWDED_SHARE);
      await Promise.all(Array.from({ length: spent }, () => other.billing.balance()));
      otherRateLimited = other.stats.rateLimited;
      window = { limit, left: limit - spent, windowLeftMs: WINDOW_MS - (clock.now() % WINDOW_MS) };
    } else {
      fresh.openWindowOnNextRequest();
    }
    const options = { baseUrl: server.url, apiKey: server.rootKey, maxRetries: 10 };
    const gate: RateGate | undefined = schedule === "old" ? new LegacyPacer() : undefined;
    const users = new ProxyUsers(new Transport(options, gate));
    let next = 0;
    let failures = 0;
    const started = performance.now();
    const caller = async () => {
      for (let i = next++; i < c.calls; i = next++) {
        await users.create({ name: `bench-${i}` }).catch(() => failures++);
      }
    };
    await Promise.all(Array.from({ length: CALLERS }, caller));
    const seconds = (performance.now() - started) / 1000;
    const windowFloor = windowFloorSeconds(c.calls, window);
    return { seconds, windowFloor, rateLimited: server.stats().rateLimited, otherRateLimited, window, failures };
  } finally {
    await server.close();
  }
}

export interface SdkFigures {
  label: string;
  calls: number;
  /** The same creates against an unlimited server: what the SDK and server cost by themselves. */
  unlimited: number;
  new: Run;
  old: Run;
}

const floorOf = (f: SdkFigures, r: Run) => Math.max(f.unlimited, r.windowFloor);

export async function benchSdk(): Promise<SdkFigures[]> {
  console.log(
    `SDK against ${LIMIT}/min: N proxy-user creates, ${CALLERS} callers, one client; crowded = another client spent ${CROWDED_SHARE * 100} % of the window, ${CROWDED_WINDOW_LEFT_MS / 1000} s before it ends`,
  );
  const figures: SdkFigures[] = [];
  for (const c of CASES) {
    // Twice, keeping the faster: the first run of a process also pays for warming up.
    const unlimited = Math.min((await run(c, "unlimited")).seconds, (await run(c, "unlimited")).seconds);
    const f = {
      label: c.label,
      calls: c.calls,
      unlimited,
      new: await run(c, "new"),
      old: await run(c, "old"),
    };
    figures.push(f);
    console.log(sdkRow(f));
  }
  return figures;
}

function sdkRow(f: SdkFigures): string {
  const side = (r: Run) =>
    `${r.seconds.toFixed(1)} s = ${(r.seconds / floorOf(f, r)).toFixed(2)} × ${floorOf(f, r).toFixed(1)} s, ${r.rateLimited} 429s${r.failures ? `, ${r.failures} FAILED` : ""}`;
  return `  ${f.label.padEnd(28)} unlimited ${f.unlimited.toFixed(1)} s | new: ${side(f.new)} | old: ${side(f.old)}${otherClient(f, " | other client's 429s ")}`;
}

function otherClient(f: SdkFigures, prefix: string): string {
  return f.new.window.left < f.new.window.limit ? `${prefix}${f.new.otherRateLimited}/${f.old.otherRateLimited}` : "";
}

export function sdkTable(figures: SdkFigures[]): string {
  const rows = [
    "| case | unlimited s | window floor s | new pacer s | ratio | 429s | old pacer s | ratio | 429s | other client's 429s (new/old run) |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const f of figures) {
    const ratio = (r: Run) => (r.seconds / floorOf(f, r)).toFixed(2);
    rows.push(
      `| ${f.label} | ${f.unlimited.toFixed(1)} | ${f.new.windowFloor.toFixed(1)} | ${f.new.seconds.toFixed(1)} | ${ratio(f.new)} | ${f.new.rateLimited} | ${f.old.seconds.toFixed(1)} | ${ratio(f.old)} | ${f.old.rateLimited} | ${otherClient(f, "") || "—"} |`,
    );
  }
  return rows.join("\n");
}
