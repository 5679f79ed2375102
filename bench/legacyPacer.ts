/**
 * The SDK's pacer before issue 12, kept only so the SDK bench can run it beside today's: it spent
 * what was left of the window evenly over the time left (GCRA), with a tenth of the remaining budget
 * allowed back to back. Not used by the SDK; plugged into a Transport through its `pacer` argument.
 * It is today's pacer (queue, window bookkeeping, 429 hold, blind mode, single probe) with the old
 * schedule in place of the new one.
 */
import { type Decision, onObservation, Pacer, type RateObservation } from "../sdk/core/pacer";

export class LegacyPacer extends Pacer {
  /** Theoretical arrival time of the next request (GCRA). */
  #tat = 0;
  /** Share of the remaining budget that may go out back to back. */
  readonly #burstFraction: number;

  constructor(options: { now?: () => number; burstFraction?: number } = {}) {
    super(options.now ? { now: options.now } : {});
    this.#burstFraction = options.burstFraction ?? 0.1;
  }

  /** Milliseconds between requests that spends the remaining budget evenly until the window ends. */
  #spacingMs(now: number): number {
    const available = this.state.remaining - this.state.inFlight;
    if (available <= 0) return Infinity;
    return Math.max(0, this.state.windowEndsAt - now) / available;
  }

  protected override decide(now: number): Decision {
    const state = this.state;
    if (now < state.blockedUntil) return { kind: "wait", ms: state.blockedUntil - now };
    if (state.blind && !state.known) return { kind: "go" };
    if (!state.known || now >= state.windowEndsAt) return state.inFlight === 0 ? { kind: "go" } : { kind: "event" };
    const interval = this.#spacingMs(now);
    if (!Number.isFinite(interval)) return { kind: "wait", ms: Math.max(1, state.windowEndsAt - now) };
    // GCRA: the schedule may run ahead of the clock by a fraction of the time left, which is the same
    // as letting that fraction of the remaining budget go out back to back.
    const earliest = this.#tat - this.#burstFraction * Math.max(0, state.windowEndsAt - now);
    return earliest <= now ? { kind: "go" } : { kind: "wait", ms: earliest - now };
  }

  protected override dispatched(now: number): void {
    const interval = this.state.known && now < this.state.windowEndsAt ? this.#spacingMs(now) : 0;
    this.#tat = Math.max(this.#tat, now) + (Number.isFinite(interval) ? interval : 0);
    super.dispatched(now);
  }

  override observe(obs: RateObservation): void {
    // A new window starts a new schedule.
    if (onObservation(this.state, obs)) this.#tat = Math.min(this.#tat, obs.receivedAt);
    this.pump();
  }
}
