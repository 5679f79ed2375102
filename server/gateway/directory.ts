import type { ProxyUserRecord, Store } from "../store";

/** What the gateway knows of a proxy user. */
export type GatewayView = Pick<ProxyUserRecord, "id" | "name" | "passwordHash" | "enabled" | "limits">;

interface PendingChange {
  /** Server-clock time at which the change reaches the gateway. */
  effectiveAt: number;
  /** The state the gateway keeps serving until then; the change itself is whatever came next. */
  before: GatewayView;
}

/**
 * The gateway's copy of the proxy users, behind the propagation delay. The store tells it the state
 * before every change of `enabled`, the limits, or a deletion; until `effectiveAt` (server clock) the
 * gateway keeps answering from that state, then from the store's current one. Both directions take
 * the same delay, and it needs no timers, so a test can cross it by moving a ManualClock.
 *
 * A new proxy user is served at once: the contract delays changes, and a stack that creates a user
 * and sends traffic through it right away should not meet a 407.
 */
export class PropagatingDirectory {
  private readonly pending = new Map<string, PendingChange[]>();
  /** Name → id of users with pending changes: a deleted one is gone from the store's name index but served until its deletion propagates. */
  private readonly recentIdByName = new Map<string, string>();
  private readonly observer = (before: ProxyUserRecord, at: number): void => this.recordChange(before, at);

  constructor(
    private readonly store: Store,
    private delayMs: number,
  ) {
    PropagatingDirectory.check(delayMs);
    store.proxyUserObservers.add(this.observer);
  }

  setDelay(ms: number): void {
    PropagatingDirectory.check(ms);
    this.delayMs = ms;
  }

  get delay(): number {
    return this.delayMs;
  }

  /** The proxy user with this username as the gateway sees it at `now`, or undefined. */
  lookup(username: string, now: number): GatewayView | undefined {
    const id = this.store.proxyUserByName(username)?.id ?? this.recentIdByName.get(username);
    if (id === undefined) return undefined;
    const changes = this.pending.get(id);
    if (changes) {
      // Changes apply in order: the last one already due takes every earlier one with it.
      let applied = -1;
      for (let i = changes.length - 1; i >= 0; i--) {
        if ((changes[i] as PendingChange).effectiveAt <= now) {
          applied = i;
          break;
        }
      }
      changes.splice(0, applied + 1);
      const next = changes[0];
      if (next) return next.before;
      this.pending.delete(id);
      if (this.recentIdByName.get(username) === id) this.recentIdByName.delete(username);
    }
    return this.store.proxyUsers.get(id);
  }

  detach(): void {
    this.store.proxyUserObservers.delete(this.observer);
  }

  private recordChange(before: ProxyUserRecord, at: number): void {
    if (this.delayMs === 0) return;
    const view: GatewayView = {
      id: before.id,
      name: before.name,
      passwordHash: before.passwordHash,
      enabled: before.enabled,
      limits: before.limits,
    };
    const changes = this.pending.get(before.id) ?? [];
    changes.push({ effectiveAt: at + this.delayMs, before: view });
    this.pending.set(before.id, changes);
    this.recentIdByName.set(before.name, before.id);
  }

  private static check(ms: number): void {
    if (!Number.isSafeInteger(ms) || ms < 0)
      throw new RangeError(`the propagation delay must be a non-negative integer of milliseconds, got ${ms}`);
  }
}
