import { describe, expect, it } from "vitest";
import {
  decide,
  initialState,
  onDispatch,
  onLost,
  onObservation,
  onRateLimited,
  onUnpaced,
  type PacerState,
} from "../../sdk/core/pacer";

const obs = (remaining: number, resetSeconds: number, receivedAt: number) => ({
  limit: 600,
  remaining,
  resetSeconds,
  receivedAt,
});

describe("pacer decisions", () => {
  it("sends one probe while it knows nothing about the window, then waits for its answer", () => {
    const s = initialState();
    expect(decide(s, 0, 0.1)).toEqual({ kind: "go" });
    onDispatch(s, 0);
    expect(decide(s, 0, 0.1)).toEqual({ kind: "event" });
    onObservation(s, obs(599, 60, 5));
    expect(decide(s, 5, 0.1).kind).toBe("go");
  });

  it("spends the remaining budget evenly over what is left of the window, after a short burst", () => {
    const s = initialState();
    onDispatch(s, 0);
    onObservation(s, obs(600, 60, 0)); // 600 left over 60 s: one every 100 ms
    let sent = 0;
    while (decide(s, 0, 0.1).kind === "go") {
      onDispatch(s, 0);
      onObservation(s, obs(600 - ++sent, 60, 0));
    }
    // About a tenth of the budget goes out at once, not the whole window.
    expect(sent).toBeGreaterThanOrEqual(55);
    expect(sent).toBeLessThanOrEqual(62);
    const d = decide(s, 0, 0.1);
    expect(d.kind).toBe("wait");
    expect(d.kind === "wait" && d.ms).toBeGreaterThan(0);
    expect(d.kind === "wait" && d.ms).toBeLessThanOrEqual(110);
  });

  it("never sends past the budget: with nothing left it waits for the window to end", () => {
    const s = initialState();
    onDispatch(s, 0);
    onObservation(s, obs(0, 12, 1000));
    expect(decide(s, 1000, 0.1)).toEqual({ kind: "wait", ms: 12_000 });
    // After the window: a single probe again.
    expect(decide(s, 13_000, 0.1)).toEqual({ kind: "go" });
    onDispatch(s, 13_000);
    expect(decide(s, 13_000, 0.1)).toEqual({ kind: "event" });
  });

  it("counts requests in flight against the budget", () => {
    const s = initialState();
    onDispatch(s, 0);
    onObservation(s, obs(3, 60, 0));
    // No answers come back: the three in flight use up the budget, the fourth waits for the window's end.
    let t = 0;
    let sent = 0;
    while (t < 60_000) {
      const d = decide(s, t, 0.1);
      if (d.kind === "go") {
        onDispatch(s, t);
        sent++;
      } else if (d.kind === "wait") t += d.ms;
      else break;
    }
    expect(sent).toBe(3);
    expect(decide(s, 60_000, 0.1)).toEqual({ kind: "event" });
  });

  it("ignores a late answer from a window it has already left", () => {
    const s = initialState();
    onDispatch(s, 0);
    onDispatch(s, 0);
    onObservation(s, obs(500, 60, 10_000)); // new window, ends at 70 s
    onObservation(s, obs(0, 1, 10_100)); // old window's straggler
    expect(s.remaining).toBe(500);
    expect(s.windowEndsAt).toBe(70_000);
  });

  it("keeps the lowest remaining and the earliest end within one window", () => {
    const s = initialState();
    onDispatch(s, 0);
    onDispatch(s, 0);
    onObservation(s, obs(10, 30, 0));
    onObservation(s, obs(12, 30, 200));
    expect(s.remaining).toBe(10);
    expect(s.windowEndsAt).toBe(30_000);
    expect(s.inFlight).toBe(0);
  });

  it("holds everything after a 429 until the retry-after passes, then probes", () => {
    const s = initialState();
    onDispatch(s, 0);
    onObservation(s, obs(100, 60, 0));
    onRateLimited(s, 5_000);
    expect(decide(s, 1_000, 0.1)).toEqual({ kind: "wait", ms: 4_000 });
    expect(decide(s, 5_000, 0.1)).toEqual({ kind: "go" });
    onDispatch(s, 5_000);
    expect(decide(s, 5_000, 0.1)).toEqual({ kind: "event" });
  });

  it("stops probing one at a time when the server never sends rate headers", () => {
    const s = initialState();
    onDispatch(s, 0);
    onDispatch(s, 0);
    expect(decide(s, 0, 0.1)).toEqual({ kind: "event" });
    onUnpaced(s);
    expect(decide(s, 0, 0.1)).toEqual({ kind: "go" });
    onLost(s);
    expect(s.inFlight).toBe(0);
  });
});

/**
 * The pacer against a model of the server's limiter (fixed windows aligned to the minute, reset in
 * whole seconds rounded up), in virtual time, with latency and bounded concurrency.
 */
function simulate(opts: {
  limit: number;
  calls: number;
  startInWindowMs: number;
  latencyMs: number;
  concurrency: number;
  burstFraction?: number;
}) {
  const s: PacerState = initialState();
  let windowIndex = -1;
  let used = 0;
  const server = (t: number) => {
    const w = Math.floor(t / 60_000);
    if (w !== windowIndex) [windowIndex, used] = [w, 0];
    const limited = used >= opts.limit;
    if (!limited) used++;
    return {
      limited,
      remaining: opts.limit - used,
      resetSeconds: Math.max(1, Math.ceil(((w + 1) * 60_000 - t) / 1000)),
    };
  };
  let t = opts.startInWindowMs;
  let todo = opts.calls;
  let done = 0;
  let rateLimited = 0;
  const perSecond = new Map<number, number>();
  const answers: { at: number; r: ReturnType<typeof server> }[] = [];
  while (done < opts.calls) {
    answers.sort((a, b) => a.at - b.at);
    while (answers[0] && answers[0].at <= t) {
      const { at, r } = answers.shift()!;
      onObservation(s, { limit: opts.limit, remaining: r.remaining, resetSeconds: r.resetSeconds, receivedAt: at });
      if (r.limited) {
        rateLimited++;
        todo++;
        onRateLimited(s, at + r.resetSeconds * 1000);
      } else done++;
    }
    if (done === opts.calls) break;
    let wake = Infinity;
    while (todo > 0 && s.inFlight < opts.concurrency) {
      const d = decide(s, t, opts.burstFraction ?? 0.1);
      if (d.kind !== "go") {
        if (d.kind === "wait") wake = t + d.ms;
        break;
      }
      onDispatch(s, t);
      todo--;
      const sec = Math.floor(t / 1000);
      perSecond.set(sec, (perSecond.get(sec) ?? 0) + 1);
      answers.push({ at: t + opts.latencyMs, r: server(t + opts.latencyMs / 2) });
    }
    const next = Math.min(wake, ...answers.map((a) => a.at));
    if (!Number.isFinite(next))
      throw new Error(`simulation stalled at ${t}: ${JSON.stringify({ s, todo, done, answers: answers.length })}`);
    t = Math.max(t + 0.001, next);
  }
  return {
    elapsedMs: t - opts.startInWindowMs,
    rateLimited,
    busiestSecond: Math.max(...perSecond.values()),
    secondsUsed: perSecond.size,
  };
}

describe("pacer against a model of the server's fixed windows", () => {
  it("runs 2.5 windows' worth of calls without a single 429 and without stalling", () => {
    const r = simulate({ limit: 600, calls: 1500, startInWindowMs: 0, latencyMs: 20, concurrency: 8 });
    expect(r.rateLimited).toBe(0);
    // 2.5 windows of budget, spread evenly: about 150 s of virtual time, a little more for the
    // probe at each window boundary, never less (that would mean overspending a window).
    expect(r.elapsedMs).toBeGreaterThan(145_000);
    expect(r.elapsedMs).toBeLessThan(155_000);
  });

  it("spreads the budget instead of bursting it", () => {
    const r = simulate({ limit: 600, calls: 600, startInWindowMs: 0, latencyMs: 5, concurrency: 8 });
    expect(r.rateLimited).toBe(0);
    // 10 a second on average; the first second may carry the burst allowance (60) on top.
    expect(r.busiestSecond).toBeLessThanOrEqual(75);
    expect(r.secondsUsed).toBeGreaterThan(50);
  });

  it("starting mid-window it uses what is left of this window, then the next", () => {
    const r = simulate({ limit: 600, calls: 900, startInWindowMs: 45_000, latencyMs: 30, concurrency: 8 });
    expect(r.rateLimited).toBe(0);
    expect(r.elapsedMs).toBeGreaterThan(15_000);
    expect(r.elapsedMs).toBeLessThan(75_000);
  });

  it("a slow network does not make it overshoot", () => {
    const r = simulate({ limit: 100, calls: 250, startInWindowMs: 30_000, latencyMs: 400, concurrency: 8 });
    expect(r.rateLimited).toBe(0);
  });
});
