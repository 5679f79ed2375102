/**
 * The SDK's pacer before issue 12, kept only so the SDK bench can run it beside today's: it spent
 * what was left of the window evenly over the time left (GCRA), with a tenth of the remaining budget
 * allowed back to back. Not used by the SDK; plugged into a Transport through its `pacer` argument.
 */
import { type RateGate, type RateObservation, SAME_WINDOW_SLACK_MS } from "../sdk/core/pacer";

interface LegacyState {
  limit: number | undefined;
  /** Lowest `remaining` seen in the current window: the counter only falls within a window. */
  remaining: number;
  /** Local estimate of when the current window ends, epoch ms. */
  windowEndsAt: number;
  /** False until an answer describes the current window, and again once it has ended. */
  known: boolean;
  /** Requests sent whose answers have not been observed yet. */
  inFlight: number;
  /** No request goes out before this (set from a 429's retry-after). */
  blockedUntil: number;
  /** Theoretical arrival time of the next request (GCRA). */
  tat: number;
  /** The server answers without rate headers (and never sent any): do not wait for them. */
  blind: boolean;
}

type Decision = { kind: "go" } | { kind: "wait"; ms: number } | { kind: "event" };

function initialState(): LegacyState {
  return {
    limit: undefined,
    remaining: 0,
    windowEndsAt: 0,
    known: false,
    inFlight: 0,
    blockedUntil: 0,
    tat: 0,
    blind: false,
  };
}

/** Milliseconds between requests that spends the remaining budget evenly until the window ends. */
function spacingMs(state: LegacyState, now: number): number {
  const available = state.remaining - state.inFlight;
  if (available <= 0) return Infinity;
  return Math.max(0, state.windowEndsAt - now) / available;
}

function decide(state: LegacyState, now: number, burstFraction: number): Decision {
  if (now < state.blockedUntil) return { kind: "wait", ms: state.blockedUntil - now };
  if (state.blind && !state.known) return { kind: "go" };
  // Without a picture of the window, one probe at a time: its answer tells us the budget.
  if (!state.known || now >= state.windowEndsAt) return state.inFlight === 0 ? { kind: "go" } : { kind: "event" };
  const interval = spacingMs(state, now);
  if (!Number.isFinite(interval)) return { kind: "wait", ms: Math.max(1, state.windowEndsAt - now) };
  // GCRA: the schedule may run ahead of the clock by a fraction of the time left, which is the same
  // as letting that fraction of the remaining budget go out back to back. Tying the allowance to
  // what is left (not to the limit) keeps a nearly spent window from being emptied in one burst.
  const earliest = state.tat - burstFraction * Math.max(0, state.windowEndsAt - now);
  return earliest <= now ? { kind: "go" } : { kind: "wait", ms: earliest - now };
}

/** Book-keeping for a request that was just sent. */
function onDispatch(state: LegacyState, now: number): void {
  const interval = state.known && now < state.windowEndsAt ? spacingMs(state, now) : 0;
  state.tat = Math.max(state.tat, now) + (Number.isFinite(interval) ? interval : 0);
  state.inFlight += 1;
}

/** Book-keeping for an answer that carried rate headers. */
function onObservation(state: LegacyState, obs: RateObservation): void {
  state.inFlight = Math.max(0, state.inFlight - 1);
  state.blind = false;
  state.limit = obs.limit ?? state.limit;
  const endsAt = obs.receivedAt + obs.resetSeconds * 1000;
  const windowOver = obs.receivedAt >= state.windowEndsAt;
  if (!state.known || windowOver || endsAt > state.windowEndsAt + SAME_WINDOW_SLACK_MS) {
    state.known = true;
    state.remaining = obs.remaining;
    state.windowEndsAt = endsAt;
    state.tat = Math.min(state.tat, obs.receivedAt);
    return;
  }
  // A late answer from a window we have already left says nothing about the current one.
  if (endsAt < state.windowEndsAt - SAME_WINDOW_SLACK_MS) return;
  state.remaining = Math.min(state.remaining, obs.remaining);
  // The reset is rounded up to whole seconds, so every estimate is a bound from above; the lowest
  // one is the closest, and pacing against a late end would push the last requests into the next window.
  state.windowEndsAt = Math.min(state.windowEndsAt, endsAt);
}

/** Book-keeping for an attempt that ended without rate headers (reset connection, timeout). */
function onLost(state: LegacyState): void {
  state.inFlight = Math.max(0, state.inFlight - 1);
}

/** An answer without rate headers; if none ever had them, stop probing one request at a time. */
function onUnpaced(state: LegacyState): void {
  state.inFlight = Math.max(0, state.inFlight - 1);
  if (!state.known && state.windowEndsAt === 0) state.blind = true;
}

/** A 429: nobody sends until `until`, and the next request probes the window again. */
function onRateLimited(state: LegacyState, until: number): void {
  state.blockedUntil = Math.max(state.blockedUntil, until);
  state.known = false;
}

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

interface LegacyOptions {
  now?: () => number;
  /** Share of the remaining budget that may go out back to back; default 0.1. */
  burstFraction?: number;
}

/** FIFO gate in front of the network: `acquire` resolves when a request may be sent. */
export class LegacyPacer implements RateGate {
  readonly state: LegacyState = initialState();
  readonly #now: () => number;
  readonly #burstFraction: number;
  readonly #queue: Waiter[] = [];
  #timer: NodeJS.Timeout | undefined;
  #timerAt = 0;

  constructor(options: LegacyOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#burstFraction = options.burstFraction ?? 0.1;
  }

  get queued(): number {
    return this.#queue.length;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.#queue.indexOf(waiter);
          if (i >= 0) this.#queue.splice(i, 1);
          reject(signal?.reason);
          this.#pump();
        },
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.#queue.push(waiter);
      this.#pump();
    });
  }

  observe(obs: RateObservation): void {
    onObservation(this.state, obs);
    this.#pump();
  }

  lost(): void {
    onLost(this.state);
    this.#pump();
  }

  unpaced(): void {
    onUnpaced(this.state);
    this.#pump();
  }

  rateLimited(waitMs: number): void {
    onRateLimited(this.state, this.#now() + waitMs);
    this.#pump();
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const now = this.#now();
      const decision = decide(this.state, now, this.#burstFraction);
      if (decision.kind === "event") {
        this.#clearTimer();
        return;
      }
      if (decision.kind === "wait") {
        this.#arm(now + decision.ms);
        return;
      }
      const waiter = this.#queue.shift()!;
      waiter.signal?.removeEventListener("abort", waiter.onAbort);
      onDispatch(this.state, now);
      waiter.resolve();
    }
    this.#clearTimer();
  }

  #arm(at: number): void {
    if (this.#timer && this.#timerAt <= at) return;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#pump();
      },
      Math.max(1, Math.ceil(at - this.#now())),
    );
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
