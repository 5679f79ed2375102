/** Failed logins allowed per minute before the gateway stops checking passwords for a while. */
export interface FailedLoginLimits {
  /** Per username presented, whether or not it exists; default 20. */
  perUsername: number;
  /** Per client address; default 200. */
  perAddress: number;
}

export const FAILED_LOGIN_DEFAULTS: FailedLoginLimits = { perUsername: 20, perAddress: 200 };

const WINDOW_MS = 60_000;
/** Names and addresses tracked at once; a flood of new ones evicts the oldest, so memory stays bounded. */
const MAX_TRACKED = 10_000;
/** Longer usernames are tracked by their first characters: a flood of long names cannot grow the map's keys. */
const MAX_KEY_LENGTH = 128;

/**
 * Counts failed logins per username and per client address in fixed one-minute windows (server
 * clock). Past either budget, logins from that address or for that name are refused before any
 * password is checked, so guessing stops being cheap; a name that does not exist is limited exactly
 * like one that does, so the limit reveals nothing either.
 */
export class FailedLogins {
  private readonly failures = new Map<string, { window: number; count: number }>();

  constructor(private readonly limits: FailedLoginLimits = FAILED_LOGIN_DEFAULTS) {
    for (const [name, value] of Object.entries(limits))
      if (!Number.isInteger(value) || value < 1)
        throw new RangeError(`failedLogins.${name} must be a positive integer of failures per minute, got ${value}`);
  }

  /** Seconds until the window ends when this username or address is over its budget, else undefined. */
  blockedFor(username: string, address: string, now: number): number | undefined {
    const window = Math.floor(now / WINDOW_MS);
    const over =
      this.countOf(userKey(username), window) >= this.limits.perUsername ||
      this.countOf(addressKey(address), window) >= this.limits.perAddress;
    return over ? Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000)) : undefined;
  }

  fail(username: string, address: string, now: number): void {
    const window = Math.floor(now / WINDOW_MS);
    this.bump(userKey(username), window);
    this.bump(addressKey(address), window);
  }

  get tracked(): number {
    return this.failures.size;
  }

  private countOf(key: string, window: number): number {
    const entry = this.failures.get(key);
    return entry && entry.window === window ? entry.count : 0;
  }

  private bump(key: string, window: number): void {
    const entry = this.failures.get(key);
    if (entry && entry.window === window) {
      entry.count++;
      return;
    }
    this.failures.delete(key);
    if (this.failures.size >= MAX_TRACKED) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
    this.failures.set(key, { window, count: 1 });
  }
}

function userKey(username: string): string {
  return `u ${username.slice(0, MAX_KEY_LENGTH)}`;
}

function addressKey(address: string): string {
  return `a ${address}`;
}
