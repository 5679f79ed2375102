/**
 * Proactive pacing against the server's per-key fixed-window rate limit.
 *
 * The server tells us, on every answer, how many requests are left in the current window
 * (`x-ratelimit-remaining`) and in how many whole seconds it resets (`x-ratelimit-reset`). The
 * window is fixed: its budget is the same whether it is spent in the first second or spread over
 * sixty, and an unspent request is lost when the window ends. So a request goes out at once
 * whenever the known budget, less the requests in flight and an optional reserve for other users
 * of the key, covers it; when it does not, nothing goes out until the window ends. Spreading the
 * budget would only make every batch that fits in it slower.
 *
 * The decision is a pure function of a small state so it can be tested without timers.
 */

export interface RateObservation {
  limit: number | undefined;
  remaining: number;
  resetSeconds: number;
  /** Local time the answer arrived, epoch ms. */
  receivedAt: number;
}

export interface PacerState {
  /** The window's budget, as the server last reported it. */
  limit: number | undefined;
  /** Lowest `remaining` seen in the current window: the counter only falls within a window. */
  remaining: number;
  /** Local estimate of when the current window ends, epoch ms; never earlier than the real end. */
  windowEndsAt: number;
  /** False until an answer describes the current window, and again once it has ended. */
  known: boolean;
  /** Requests sent whose answers have not been observed yet. */
  inFlight: number;
  /** No request goes out before this (set from a 429's retry-after). */
  blockedUntil: number;
  /** The server answers without rate headers (and never sent any): do not wait for them. */
  blind: boolean;
}

export type Decision = { kind: "go" } | { kind: "wait"; ms: number } | { kind: "event" };

/** Two estimates of a window's end closer than this describe the same window. */
export const SAME_WINDOW_SLACK_MS = 2_500;

export function initialState(): PacerState {
  return { limit: undefined, remaining: 0, windowEndsAt: 0, known: false, inFlight: 0, blockedUntil: 0, blind: false };
}

/**
 * Requests that may still go out in the current window. Every request the server counted after the
 * answer that reported `remaining` is still in flight (its own answer would have reported less), so
 * `remaining - inFlight` never overestimates what the server will accept from us.
 */
export function spendable(state: PacerState, reserve: number): number {
  return state.remaining - state.inFlight - reserve;
}

export function decide(state: PacerState, now: number, reserve: number): Decision {
  if (now < state.blockedUntil) return { kind: "wait", ms: state.blockedUntil - now };
  if (state.blind && !state.known) return { kind: "go" };
  // Without a picture of the window, one probe at a time: its answer tells us the budget.
  if (!state.known || now >= state.windowEndsAt) return state.inFlight === 0 ? { kind: "go" } : { kind: "event" };
  if (spendable(state, reserve) > 0) return { kind: "go" };
  // The budget is spent (or promised to requests in flight): only the next window brings more. An
  // answer cannot raise it; a lost request can, and wakes the queue through `lost`.
  return { kind: "wait", ms: Math.max(1, state.windowEndsAt - now) };
}

/** Book-keeping for a request that was just sent. */
export function onDispatch(state: PacerState): void {
  state.inFlight += 1;
}

/** Book-keeping for an answer that carried rate headers; true when it describes a new window. */
export function onObservation(state: PacerState, obs: RateObservation): boolean {
  state.inFlight = Math.max(0, state.inFlight - 1);
  state.blind = false;
  state.limit = obs.limit ?? state.limit;
  const endsAt = obs.receivedAt + obs.resetSeconds * 1000;
  const windowOver = obs.receivedAt >= state.windowEndsAt;
  if (!state.known || windowOver || endsAt > state.windowEndsAt + SAME_WINDOW_SLACK_MS) {
    state.known = true;
    state.remaining = obs.remaining;
    state.windowEndsAt = endsAt;
    return true;
  }
  // A late answer from a window we have already left says nothing about the current one.
  if (endsAt < state.windowEndsAt - SAME_WINDOW_SLACK_MS) return false;
  state.remaining = Math.min(state.remaining, obs.remaining);
  // The reset is rounded up to whole seconds and read after the answer travelled, so every estimate
  // is a bound from above; the lowest one is the closest. Waiting for it never sends into the old window.
  state.windowEndsAt = Math.min(state.windowEndsAt, endsAt);
  return false;
}

/** Book-keeping for an attempt that ended without rate headers (reset connection, timeout). */
export function onLost(state: PacerState): void {
  state.inFlight = Math.max(0, state.inFlight - 1);
}

/** An answer without rate headers; if none ever had them, stop probing one request at a time. */
export function onUnpaced(state: PacerState): void {
  state.inFlight = Math.max(0, state.inFlight - 1);
  if (!state.known && state.windowEndsAt === 0) state.blind = true;
}

/** A 429: nobody sends until `until`, and the next request probes the window again. */
export function onRateLimited(state: PacerState, until: number): void {
  state.blockedUntil = Math.max(state.blockedUntil, until);
  state.known = false;
}

/** What the transport needs of a pacer; the bench plugs an older schedule in for comparison. */
export interface RateGate {
  readonly state: Readonly<PacerState>;
  acquire(signal?: AbortSignal): Promise<void>;
  observe(obs: RateObservation): void;
  lost(): void;
  unpaced(): void;
  rateLimited(waitMs: number): void;
}

export interface PacerOptions {
  now?: () => number;
  /** Requests per window left unspent for other users of the key; default 0. */
  reserve?: number;
}

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** FIFO gate in front of the network: `acquire` resolves when a request may be sent. */
export class Pacer implements RateGate {
  readonly state: PacerState = initialState();
  readonly #now: () => number;
  readonly #reserve: number;
  readonly #queue: Waiter[] = [];
  #timer: NodeJS.Timeout | undefined;
  #timerAt = 0;

  constructor(options: PacerOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#reserve = options.reserve ?? 0;
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
          this.pump();
        },
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.#queue.push(waiter);
      this.pump();
    });
  }

  observe(obs: RateObservation): void {
    onObservation(this.state, obs);
    this.pump();
  }

  lost(): void {
    onLost(this.state);
    this.pump();
  }

  unpaced(): void {
    onUnpaced(this.state);
    this.pump();
  }

  rateLimited(waitMs: number): void {
    onRateLimited(this.state, this.#now() + waitMs);
    this.pump();
  }

  /** The schedule: may the next queued request go at `now`? (The bench's old pacer overrides it.) */
  protected decide(now: number): Decision {
    return decide(this.state, now, this.#reserve);
  }

  /** Book-keeping once a request is let through. */
  protected dispatched(_now: number): void {
    onDispatch(this.state);
  }

  /** Lets through every queued request the schedule allows, and arms a timer for the next one. */
  protected pump(): void {
    while (this.#queue.length > 0) {
      const now = this.#now();
      const decision = this.decide(now);
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
      this.dispatched(now);
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
        this.pump();
      },
      Math.max(1, Math.ceil(at - this.#now())),
    );
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
