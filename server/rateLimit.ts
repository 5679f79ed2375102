import { MINUTE_MS } from "./clock";

export interface RateState {
  limited: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window ends, at least 1. */
  resetSeconds: number;
}

/**
 * Fixed windows aligned to the clock (60 s for the API, one budget per API key, not per secret, so
 * rotating cannot double a key's budget; 1 s for the gateway, one budget per proxy user).
 */
export class RateLimiter {
  private readonly windows = new Map<string, { window: number; used: number }>();

  /** `perMinute` is the budget of one window; the name stays from when every window was a minute. */
  constructor(
    private perMinute: number,
    private readonly windowMs: number = MINUTE_MS,
  ) {
    RateLimiter.check(perMinute);
  }

  setLimit(perMinute: number): void {
    RateLimiter.check(perMinute);
    this.perMinute = perMinute;
  }

  take(keyId: string, now: number): RateState {
    const window = Math.floor(now / this.windowMs);
    let entry = this.windows.get(keyId);
    if (entry === undefined) {
      entry = { window, used: 0 };
      this.windows.set(keyId, entry);
    } else if (entry.window !== window) {
      entry.window = window;
      entry.used = 0;
    }
    const limited = entry.used >= this.perMinute;
    if (!limited) entry.used++;
    return {
      limited,
      limit: this.perMinute,
      remaining: Math.max(0, this.perMinute - entry.used),
      resetSeconds: Math.max(1, Math.ceil(((window + 1) * this.windowMs - now) / 1000)),
    };
  }

  /** Every budget's current window without taking from it: a window that has ended reads as unused. */
  windowsAt(now: number): { id: string; used: number; limit: number; resetSeconds: number }[] {
    const window = Math.floor(now / this.windowMs);
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * this.windowMs - now) / 1000));
    return [...this.windows].map(([id, entry]) => ({
      id,
      used: entry.window === window ? entry.used : 0,
      limit: this.perMinute,
      resetSeconds,
    }));
  }

  forget(keyId: string): void {
    this.windows.delete(keyId);
  }

  private static check(perMinute: number): void {
    if (!Number.isInteger(perMinute) || perMinute < 1)
      throw new RangeError(`rate limit must be a positive integer, got ${perMinute}`);
  }
}
