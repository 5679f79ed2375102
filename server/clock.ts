import { DAY_MS } from "../contract/pricing";

/** Epoch milliseconds. Everything time-dependent in the server reads this, so tests can jump across
 * grace periods, month boundaries and rate windows without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  private current: number;

  constructor(startMs: number = Date.now()) {
    assertFiniteTime(startMs);
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    assertFiniteTime(ms);
    if (ms < 0) throw new RangeError("a ManualClock only moves forward; use set() to go back");
    this.current += ms;
  }

  set(ms: number): void {
    assertFiniteTime(ms);
    this.current = ms;
  }
}

/**
 * The system clock, moved forward on demand: time passes as it does for every other process (the
 * engine's history, a lock's timestamp), and a test can still jump a day past the idempotency ledger.
 */
export class ShiftedClock implements Clock {
  private offset = 0;

  now(): number {
    return Date.now() + this.offset;
  }

  advance(ms: number): void {
    assertFiniteTime(ms);
    if (ms < 0) throw new RangeError("a ShiftedClock only moves forward");
    this.offset += ms;
  }
}

function assertFiniteTime(ms: number): void {
  if (!Number.isFinite(ms)) throw new RangeError(`not a finite time in milliseconds: ${ms}`);
}

export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
/** A day, as the contract counts an allocation's term and a key's schedule. */
export { DAY_MS };

export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/** The last day asked for: the gateway asks for every exchange it meters, almost always the same day. */
let lastDay = { start: Number.NaN, day: "" };

/** `YYYY-MM-DD` of the UTC day holding `ms`. */
export function utcDay(ms: number): string {
  if (ms >= lastDay.start && ms < lastDay.start + DAY_MS) return lastDay.day;
  const day = isoTimestamp(ms).slice(0, 10);
  lastDay = { start: ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS), day };
  return day;
}

/** `YYYY-MM` of the UTC calendar month holding `ms`; replacement allowances reset when it changes. */
export function utcMonth(ms: number): string {
  return isoTimestamp(ms).slice(0, 7);
}
