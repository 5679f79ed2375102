/** The budgets here run in fixed one-minute windows of the server clock. */
export const WINDOW_MS = 60_000;

interface Budget {
  window: number;
  count: number;
}

/**
 * One kind of budget (per pair, per username or per address), in fixed one-minute windows. An entry
 * lives until its window is over; only then may it make room. A full table of entries in force
 * refuses new keys instead of forgetting old ones, so no flood of others' failures can reset a
 * budget an attacker has used up.
 */
export class BudgetTable {
  /** Insertion order is window order: an entry moved to a new window is deleted and set again. */
  private readonly budgets = new Map<string, Budget>();

  constructor(
    readonly limit: number,
    private readonly maxTracked: number,
  ) {}

  get size(): number {
    return this.budgets.size;
  }

  /** Over its budget, or (the table full of budgets in force) a key that could not be tracked. */
  blocks(key: string, window: number): boolean {
    const budget = this.budgets.get(key);
    if (budget !== undefined && budget.window === window) return budget.count >= this.limit;
    return this.full(window);
  }

  bump(key: string, window: number): void {
    const budget = this.budgets.get(key);
    if (budget !== undefined && budget.window === window) {
      budget.count++;
      return;
    }
    this.budgets.delete(key);
    if (!this.full(window)) this.budgets.set(key, { window, count: 1 });
  }

  /** Drops the budgets of windows that are over, oldest first; they sit at the front. */
  sweep(window: number): void {
    for (const [key, budget] of this.budgets) {
      if (budget.window === window) return;
      this.budgets.delete(key);
    }
  }

  private full(window: number): boolean {
    if (this.budgets.size < this.maxTracked) return false;
    this.sweep(window);
    return this.budgets.size >= this.maxTracked;
  }
}
