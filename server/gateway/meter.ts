import { BYTES_PER_GB } from "../../contract/proxyUsers";
import { type Clock, utcDay, utcMonth } from "../clock";
import type { Store } from "../store";
import type { GatewayView } from "./directory";

/** Usage is written to the store this often while traffic flows, and when an exchange ends. */
export const FLUSH_INTERVAL_MS = 1000;

/** One proxy user's traffic in flight: its open exchanges and what they carried since the last flush. */
interface UserFlow {
  readonly user: GatewayView;
  readonly open: Set<Exchange>;
  bytes: number;
  requests: number;
  /** Bytes left before a ceiling, as of the last flush; Infinity without one. */
  headroom: number;
}

/**
 * One request and its answer, or one tunnel: every byte the client connection carried for it, in both
 * directions. Its bytes count once it is committed (the gateway reached the target); a refusal before
 * that bills nothing.
 */
export class Exchange {
  /** Every byte counted so far, billed or not: what the log line shows. */
  bytes = 0;
  private flow: UserFlow | undefined;
  private committed = false;
  private ended = false;

  constructor(
    private readonly meter: TrafficMeter,
    /** What carries it; cutting it ends the exchange from the gateway's side: the client sees its connection close. */
    private readonly connection: { cut(): void },
  ) {}

  cut(): void {
    this.connection.cut();
  }

  count(bytes: number): void {
    if (this.ended || bytes === 0) return;
    this.bytes += bytes;
    if (this.committed && this.flow) this.meter.flowed(this.flow, bytes);
  }

  /** Admitted for this user: open (it counts towards the user's cap, and is cut at its ceiling), not billed yet. */
  open(user: GatewayView): void {
    this.flow = this.meter.open(this, user);
  }

  /** The target is reached: one request, and every byte so far and from now on, goes to the user's usage. */
  commit(): void {
    if (this.ended || this.committed || !this.flow) return;
    this.committed = true;
    this.flow.requests++;
    this.meter.flowed(this.flow, this.bytes);
  }

  get billed(): number {
    return this.committed ? this.bytes : 0;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.flow) this.meter.close(this, this.flow);
  }
}

/**
 * Writes the gateway's traffic to the proxy users' usage while it flows: when an exchange ends, and
 * every second for what is still open. Between flushes it knows each user's headroom under its
 * ceilings, in memory, so the exchange that crosses one is cut at once (within one socket chunk, at
 * most 64 KB, past it), and the flush at that moment lets new requests see the ceiling. (Flushing
 * every 64 KB as well cost a quarter of the 1 MB throughput and bought nothing the headroom does not.)
 * A flush only adds to the store and takes what it added off the headroom; the headroom is read
 * afresh, with the user's current limits, each second and before anything is cut, so a flush stays
 * cheap enough for one per small exchange.
 */
export class TrafficMeter {
  private readonly flows = new Map<string, UserFlow>();
  /** Runs while the gateway does: starting and stopping it as users' traffic comes and goes cost more than it. */
  private readonly timer = setInterval(() => this.tick(), FLUSH_INTERVAL_MS).unref();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** The user as the gateway sees it now, for limits changed while it has traffic in flight. */
    private readonly current: (user: GatewayView) => GatewayView | undefined,
    private readonly onCommit: () => void,
  ) {}

  /** Exchanges the user has open now. */
  openCount(userId: string): number {
    return this.flows.get(userId)?.open.size ?? 0;
  }

  open(exchange: Exchange, user: GatewayView): UserFlow {
    let flow = this.flows.get(user.id);
    if (flow === undefined) {
      flow = { user, open: new Set(), bytes: 0, requests: 0, headroom: this.headroom(user) };
      this.flows.set(user.id, flow);
    }
    flow.open.add(exchange);
    return flow;
  }

  flowed(flow: UserFlow, bytes: number): void {
    flow.bytes += bytes;
    if (flow.bytes <= flow.headroom) return;
    this.flush(flow);
    // The limits may have been raised since the headroom was last read.
    flow.headroom = this.headroom(this.current(flow.user) ?? flow.user);
    if (flow.headroom < 0) for (const exchange of flow.open) exchange.cut();
  }

  close(exchange: Exchange, flow: UserFlow): void {
    flow.open.delete(exchange);
    this.flush(flow);
  }

  stop(): void {
    this.tick();
    clearInterval(this.timer);
  }

  /** Each second: what flowed goes to the store, each headroom is read afresh, and idle users are forgotten. */
  private tick(): void {
    for (const flow of this.flows.values()) {
      this.flush(flow);
      if (flow.open.size === 0) this.flows.delete(flow.user.id);
      else flow.headroom = this.headroom(this.current(flow.user) ?? flow.user);
    }
  }

  private flush(flow: UserFlow): void {
    if (flow.bytes === 0 && flow.requests === 0) return;
    this.store.recordTraffic(flow.user.id, utcDay(this.clock.now()), flow.bytes, flow.requests);
    flow.headroom -= flow.bytes;
    flow.bytes = 0;
    flow.requests = 0;
    this.onCommit();
  }

  /** Bytes the user may still carry before today's or this month's ceiling (UTC, server clock). */
  private headroom(user: GatewayView): number {
    const { daily_gb: daily, monthly_gb: monthly } = user.limits;
    if (daily === null && monthly === null) return Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    let left = Number.POSITIVE_INFINITY;
    if (daily !== null) left = daily * BYTES_PER_GB - this.store.bytesOnDay(user.id, utcDay(now));
    if (monthly !== null)
      left = Math.min(left, monthly * BYTES_PER_GB - this.store.bytesInMonth(user.id, utcMonth(now)));
    return left;
  }
}
