import { BudgetTable, WINDOW_MS } from "./budgetTable";

/** Addresses tracked at once; past it an address that would need a new entry is refused, never one forgotten. */
const MAX_TRACKED = 100_000;

/**
 * Failed authentications (401) per client address, in fixed one-minute windows of the server clock.
 * Past the budget the address gets 429 before any secret is looked at, its right ones too, so
 * guessing stops being cheap and a guesser learns nothing while limited. A flood from many addresses
 * fills the table and is refused rather than forgetting a budget in force (see BudgetTable).
 */
export class FailedAuthentications {
  private readonly addresses: BudgetTable;
  private sweptWindow = 0;

  constructor(perMinute: number, maxTracked = MAX_TRACKED) {
    if (!Number.isInteger(perMinute) || perMinute < 1)
      throw new RangeError(`failedAuthPerMinute must be a positive integer, got ${perMinute}`);
    this.addresses = new BudgetTable(perMinute, maxTracked);
  }

  get limit(): number {
    return this.addresses.limit;
  }

  /** Seconds until the window ends when the address is over its budget (or cannot be tracked), else undefined. */
  blockedFor(address: string, now: number): number | undefined {
    // The usual case, nothing failed lately: nothing to look up.
    if (this.addresses.size === 0) return undefined;
    const window = this.windowOf(now);
    if (!this.addresses.blocks(address, window)) return undefined;
    return Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
  }

  fail(address: string, now: number): void {
    this.addresses.bump(address, this.windowOf(now));
  }

  private windowOf(now: number): number {
    const window = Math.floor(now / WINDOW_MS);
    if (window !== this.sweptWindow) {
      this.sweptWindow = window;
      this.addresses.sweep(window);
    }
    return window;
  }
}
