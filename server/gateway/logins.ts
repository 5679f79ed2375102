import { BudgetTable, WINDOW_MS } from "../budgetTable";

/** Failed logins allowed per minute before the gateway stops checking passwords for a while. */
export interface FailedLoginLimits {
  /** Per username from one client address; default 20. What a guesser at one address gets. */
  perPair: number;
  /** Per username presented, whether or not it exists, from all addresses together; default 100. */
  perUsername: number;
  /** Per client address, whatever names it tries; default 200. */
  perAddress: number;
}

export const FAILED_LOGIN_DEFAULTS: FailedLoginLimits = { perPair: 20, perUsername: 100, perAddress: 200 };

/** Budgets in force held at once, per table; past it a login that would need a new entry is refused, never an entry forgotten. */
export const MAX_TRACKED = 100_000;
/** Longer usernames are tracked by their first characters: a flood of long names cannot grow the map's keys. */
const MAX_KEY_LENGTH = 128;

/**
 * Counts failed logins in fixed one-minute windows (server clock), in three separate tables: per
 * username and client address together, per username, and per address. Past any of them, logins
 * for that name from that address, for that name, or from that address are refused before any
 * password is checked, so guessing stops being cheap. The pair's budget runs out first: a guesser at
 * one address locks out only itself, and it takes guesses from several addresses to reach the
 * username's. A name that does not exist is limited exactly like one that does, so the limit reveals
 * nothing either.
 */
export class FailedLogins {
  private readonly pairs: BudgetTable;
  private readonly usernames: BudgetTable;
  private readonly addresses: BudgetTable;
  private sweptWindow = 0;

  constructor(given: Partial<FailedLoginLimits> = {}, maxTracked = MAX_TRACKED) {
    const limits = { ...FAILED_LOGIN_DEFAULTS, ...given };
    for (const [name, value] of Object.entries(limits))
      if (!Number.isInteger(value) || value < 1)
        throw new RangeError(`failedLogins.${name} must be a positive integer of failures per minute, got ${value}`);
    this.pairs = new BudgetTable(limits.perPair, maxTracked);
    this.usernames = new BudgetTable(limits.perUsername, maxTracked);
    this.addresses = new BudgetTable(limits.perAddress, maxTracked);
  }

  /** Seconds until the window ends when this username, this address or the two together are over a budget, else undefined. */
  blockedFor(username: string, address: string, now: number): number | undefined {
    const window = this.windowOf(now);
    const name = userKey(username);
    const over =
      this.pairs.blocks(pairKey(name, address), window) ||
      this.usernames.blocks(name, window) ||
      this.addresses.blocks(address, window);
    return over ? Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000)) : undefined;
  }

  fail(username: string, address: string, now: number): void {
    const window = this.windowOf(now);
    const name = userKey(username);
    this.pairs.bump(pairKey(name, address), window);
    this.usernames.bump(name, window);
    this.addresses.bump(address, window);
  }

  /** Budgets held now; 0 once a minute has passed without failures, so the usual login skips all this. */
  get tracked(): number {
    return this.pairs.size + this.usernames.size + this.addresses.size;
  }

  private windowOf(now: number): number {
    const window = Math.floor(now / WINDOW_MS);
    if (window !== this.sweptWindow) {
      this.sweptWindow = window;
      for (const table of [this.pairs, this.usernames, this.addresses]) table.sweep(window);
    }
    return window;
  }
}

function userKey(username: string): string {
  return username.slice(0, MAX_KEY_LENGTH);
}

function pairKey(name: string, address: string): string {
  return `${address} ${name}`;
}
