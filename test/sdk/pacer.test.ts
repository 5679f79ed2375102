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
    expect(decide(s, 0, 0)).toEqual({ kind: "go" });
    onDispatch(s);
    expect(decide(s, 0, 0)).toEqual({ kind: "event" });
    onObservation(s, obs(599, 60, 5));
    expect(decide(s, 5, 0).kind).toBe("go");
  });

  it("sends a fresh window's whole budget at once, then waits for the window's end", () => {
    const s = initialState();
    onDispatch(s);
    onObservation(s, obs(599, 60, 0));
    // No answers come back yet: everything the window has left goes out in the same millisecond.
    let sent = 0;
    while (decide(s, 0, 0).kind === "go") {
      onDispatch(s);
      sent++;
    }
    expect(sent).toBe(599);
    expect(decide(s, 0, 0)).toEqual({ kind: "wait", ms: 60_000 });
    // Answers of requests already counted cannot raise the budget.
    for (let i = 0; i < sent; i++) onObservation(s, obs(598 - i, 60, 10));
    expect(s.remaining).toBe(0);
    expect(decide(s, 10, 0)).toEqual({ kind: "wait", ms: 59_990 });
  });

  it("leaves the reserve unspent for other users of the key", () => {
    const s = initialState();
    onDispatch(s);
    onObservation(s, obs(100, 60, 0));
    let sent = 0;
    while (decide(s, 0, 30).kind === "go") {
      onDispatch(s);
      sent++;
    }
    expect(sent).toBe(70);
    expect(decide(s, 0, 30)).toEqual({ kind: "wait", ms: 60_000 });
    // Someone else spends part of the reserve: the answers say so, and the client still waits.
    onObservation(s, obs(20, 59, 1_000));
    expect(decide(s, 1_000, 30).kind).toBe("wait");
  });

  it("a request lost on the way gives its place in the budget back", () => {
    const s = initialState();
    onDispatch(s);
    onObservation(s, obs(2, 60, 0));
    onDispatch(s);
    onDispatch(s);
    expect(decide(s, 0, 0).kind).toBe("wait");
    onLost(s);
    expect(decide(s, 0, 0)).toEqual({ kind: "go" });
  });

  it("never sends past the budget: with nothing left it waits for the window to end", () => {
    const s = initialState();
    onDispatch(s);
    onObservation(s, obs(0, 12, 1000));
    expect(decide(s, 1000, 0)).toEqual({ kind: "wait", ms: 12_000 });
    // After the window: a single probe again.
    expect(decide(s, 13_000, 0)).toEqual({ kind: "go" });
    onDispatch(s);
    expect(decide(s, 13_000, 0)).toEqual({ kind: "event" });
  });

  it("counts requests in flight against the budget", () => {
    const s = initialState();
    onDispatch(s);
    onObservation(s, obs(3, 60, 0));
    // No answers come back: the three in flight use up the budget, the fourth waits for the window's end.
    let t = 0;
    let sent = 0;
    while (t < 60_000) {
      const d = decide(s, t, 0);
      if (d.kind === "go") {
        onDispatch(s);
        sent++;
      } else if (d.kind === "wait") t += d.ms;
      else break;
    }
    expect(sent).toBe(3);
    expect(decide(s, 60_000, 0)).toEqual({ kind: "event" });
  });

  it("ignores a late answer from a window it has already left", () => {
    const s = initialState();
    onDispatch(s);
    onDispatch(s);
    onObservation(s, obs(500, 60, 10_000)); // new window, ends at 70 s
    onObservation(s, obs(0, 1, 10_100)); // old window's straggler
    expect(s.remaining).toBe(500);
    expect(s.windowEndsAt).toBe(70_000);
  });

  it("keeps the lowest remaining and the earliest end within one window", () => {
    const s = initialState();
    onDispatch(s);
    onDispatch(s);
    onObservation(s, obs(10, 30, 0));
    onObservation(s, obs(12, 30, 200));
    expect(s.remaining).toBe(10);
    expect(s.windowEndsAt).toBe(30_000);
    expect(s.inFlight).toBe(0);
  });

  it("holds everything after a 429 until the retry-after passes, then probes", () => {
    const s = initialState();
    onDispatch(s);
    onObservation(s, obs(100, 60, 0));
    onRateLimited(s, 5_000);
    expect(decide(s, 1_000, 0)).toEqual({ kind: "wait", ms: 4_000 });
    expect(decide(s, 5_000, 0)).toEqual({ kind: "go" });
    onDispatch(s);
    expect(decide(s, 5_000, 0)).toEqual({ kind: "event" });
  });

  it("stops probing one at a time when the server never sends rate headers", () => {
    const s = initialState();
    onDispatch(s);
    onDispatch(s);
    expect(decide(s, 0, 0)).toEqual({ kind: "event" });
    onUnpaced(s);
    expect(decide(s, 0, 0)).toEqual({ kind: "go" });
    onLost(s);
    expect(s.inFlight).toBe(0);
  });
});

/**
 * The pacer against a model of the server's limiter (fixed windows aligned to the minute, reset in
 * whole seconds rounded up), in virtual time, with latency and bounded concurrency. Another user of
 * the key may have spent part of the first window before the run starts.
 */
function simulate(opts: {
  limit: number;
  calls: number;
  startInWindowMs: number;
  latencyMs: number;
  concurrency: number;
  reserve?: number;
  spentByOthers?: number;
}) {
  const s: PacerState = initialState();
  let windowIndex = Math.floor(opts.startInWindowMs / 60_000);
  let used = opts.spentByOthers ?? 0;
  const ours = new Map<number, number>();
  const server = (t: number) => {
    const w = Math.floor(t / 60_000);
    if (w !== windowIndex) [windowIndex, used] = [w, 0];
    const limited = used >= opts.limit;
    if (!limited) {
      used++;
      ours.set(w, (ours.get(w) ?? 0) + 1);
    }
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
      const d = decide(s, t, opts.reserve ?? 0);
      if (d.kind !== "go") {
        if (d.kind === "wait") wake = t + d.ms;
        break;
      }
      onDispatch(s);
      todo--;
      answers.push({ at: t + opts.latencyMs, r: server(t + opts.latencyMs / 2) });
    }
    const next = Math.min(wake, ...answers.map((a) => a.at));
    if (!Number.isFinite(next))
      throw new Error(`simulation stalled at ${t}: ${JSON.stringify({ s, todo, done, answers: answers.length })}`);
    t = Math.max(t + 0.001, next);
  }
  const firstWindow = Math.floor(opts.startInWindowMs / 60_000);
  return {
    elapsedMs: t - opts.startInWindowMs,
    rateLimited,
    /** Our requests the server counted, by window, the first window first. */
    perWindow: [...ours.entries()].sort(([a], [b]) => a - b).map(([w, n]) => ({ window: w - firstWindow, n })),
  };
}

describe("pacer against a model of the server's fixed windows", () => {
  it("a batch that fits in a fresh window goes out at the speed of the server", () => {
    const r = simulate({ limit: 600, calls: 500, startInWindowMs: 0, latencyMs: 5, concurrency: 8 });
    expect(r.rateLimited).toBe(0);
    expect(r.perWindow).toEqual([{ window: 0, n: 500 }]);
    // 500 calls, 8 at a time, 5 ms each: about 0.3 s, nowhere near the window's 60 s.
    expect(r.elapsedMs).toBeLessThan(500);
  });

  it("runs 2.5 windows' worth of calls in the time the windows need, with no 429", () => {
    const r = simulate({ limit: 600, calls: 1500, startInWindowMs: 0, latencyMs: 20, concurrency: 8 });
    expect(r.rateLimited).toBe(0);
    // Each window is spent to the last request before the next one is touched.
    expect(r.perWindow).toEqual([
      { window: 0, n: 600 },
      { window: 1, n: 600 },
      { window: 2, n: 300 },
    ]);
    // The window floor is 60 s × (ceil(1500 / 600) - 1) = 120 s; above it: a probe at each window
    // boundary and the third window's 300 calls (300 / 8 × 20 ms).
    expect(r.elapsedMs).toBeGreaterThan(120_000);
    expect(r.elapsedMs).toBeLessThan(122_000);
  });

  it("starting mid-window it uses what is left of this window, then the next", () => {
    const r = simulate({ limit: 600, calls: 900, startInWindowMs: 45_000, latencyMs: 30, concurrency: 8 });
    expect(r.rateLimited).toBe(0);
    expect(r.perWindow).toEqual([
      { window: 0, n: 600 },
      { window: 1, n: 300 },
    ]);
    expect(r.elapsedMs).toBeGreaterThan(15_000);
    expect(r.elapsedMs).toBeLessThan(17_500);
  });

  it("in a window someone else has mostly spent, it takes what is left and waits for the next", () => {
    const r = simulate({
      limit: 600,
      calls: 200,
      startInWindowMs: 10_000,
      latencyMs: 10,
      concurrency: 8,
      spentByOthers: 480,
    });
    expect(r.rateLimited).toBe(0);
    expect(r.perWindow).toEqual([
      { window: 0, n: 120 },
      { window: 1, n: 80 },
    ]);
    // The floor for what is left: the 50 s until the window ends.
    expect(r.elapsedMs).toBeLessThan(51_500);
  });

  it("leaves the reserve of every window unspent", () => {
    const r = simulate({ limit: 600, calls: 1200, startInWindowMs: 0, latencyMs: 10, concurrency: 8, reserve: 60 });
    expect(r.rateLimited).toBe(0);
    expect(r.perWindow).toEqual([
      { window: 0, n: 540 },
      { window: 1, n: 540 },
      { window: 2, n: 120 },
    ]);
  });

  it("a slow network does not make it overshoot", () => {
    const r = simulate({ limit: 100, calls: 250, startInWindowMs: 30_000, latencyMs: 400, concurrency: 8 });
    expect(r.rateLimited).toBe(0);
  });
});
