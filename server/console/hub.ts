import type { ServerResponse } from "node:http";
import { BYTES_PER_GB } from "../../contract/proxyUsers";
import { type Clock, utcDay } from "../clock";
import type { ServerControl } from "../control";
import type { FaultInjector } from "../faults";
import { redactPath } from "../logRedaction";
import type { RateLimiter } from "../rateLimit";
import type { RequestRecord } from "../requestLog";
import type { Store } from "../store";

/** Requests the console keeps for a page that opens late. */
export const LOG_KEPT = 200;
/** New log lines go out at most this often: 100 requests a second cost a page 4 updates, not 100. */
export const LOG_FLUSH_MS = 250;
/** Windows, gateway traffic and faults go out this often; objects too, when something changed. */
export const STATE_TICK_MS = 1000;
/** The gateway users the console charts, those with the most traffic today first. */
export const GATEWAY_USERS_SHOWN = 50;

export interface ConsoleSources {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  faults: FaultInjector;
  control: ServerControl;
  /** Shown in the header, so the page says which server it watches. */
  urls: { api: string; gateway: string };
}

/** A request as the page gets it: the path redacted exactly as the request log redacts it. */
function shown({ rawPath, ...record }: RequestRecord): Omit<RequestRecord, "rawPath"> & { path: string } {
  return { ...record, path: redactPath(rawPath) };
}

/**
 * What the console shows, pushed to every open page as server-sent events. The hot path (a request
 * finishing) only appends to an array; everything else happens on two timers, and only while a page
 * is open. Nothing here holds a secret: objects are rendered as the API lists them without the key
 * hint, and paths are the request log's redacted ones.
 */
export class ConsoleHub {
  private readonly clients = new Set<ServerResponse>();
  private readonly recent: RequestRecord[] = [];
  private pending: RequestRecord[] = [];
  private objectsChanged = false;
  private logTimer: NodeJS.Timeout | undefined;
  private stateTimer: NodeJS.Timeout | undefined;

  constructor(private readonly sources: ConsoleSources) {}

  /** From the request log, for every API request. */
  readonly onRequest = (record: RequestRecord): void => {
    this.recent.push(record);
    if (this.recent.length > LOG_KEPT * 2) this.recent.splice(0, this.recent.length - LOG_KEPT);
    if (this.clients.size > 0) this.pending.push(record);
  };

  /** From every committed change (API writes, the gateway's metering, the controls). */
  readonly onCommit = (): void => {
    this.objectsChanged = true;
  };

  /** A page subscribes: it gets everything at once, then the changes. */
  subscribe(res: ServerResponse): void {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-content-type-options": "nosniff",
    });
    this.clients.add(res);
    res.on("close", () => {
      this.clients.delete(res);
      if (this.clients.size === 0) this.stopTimers();
    });
    this.send(res, "objects", this.objects());
    this.send(res, "log", { records: this.recent.slice(-LOG_KEPT).map(shown), count: 0 });
    this.send(res, "state", this.state());
    this.startTimers();
  }

  close(): void {
    this.stopTimers();
    for (const client of this.clients) client.end();
    this.clients.clear();
  }

  private startTimers(): void {
    this.logTimer ??= setInterval(() => this.flushLog(), LOG_FLUSH_MS).unref();
    this.stateTimer ??= setInterval(() => this.tick(), STATE_TICK_MS).unref();
  }

  private stopTimers(): void {
    clearInterval(this.logTimer);
    clearInterval(this.stateTimer);
    this.logTimer = this.stateTimer = undefined;
    this.pending = [];
  }

  private flushLog(): void {
    if (this.pending.length === 0) return;
    // The page shows the latest lines; `count` tells it how many arrived, for its rate.
    const count = this.pending.length;
    const batch = this.pending.slice(-LOG_KEPT);
    this.pending = [];
    this.broadcast("log", { records: batch.map(shown), count });
    // A write shows up within a second: its objects go out with the log line that made them.
    if (this.objectsChanged && batch.some((record) => record.method !== "GET")) this.pushObjects();
  }

  private tick(): void {
    if (this.objectsChanged) this.pushObjects();
    this.broadcast("state", this.state());
  }

  private pushObjects(): void {
    this.objectsChanged = false;
    this.broadcast("objects", this.objects());
  }

  private objects(): Record<string, unknown[]> {
    const { proxyUsers, ips, keys, charges } = this.sources.control.snapshot();
    // The hint is the secret's last four characters: the API lists it, the console has no need to.
    const keysShown = (keys as Record<string, unknown>[]).map(({ secret_hint: _hint, ...key }) => key);
    return { proxyUsers, keys: keysShown, ips, charges: charges.slice(0, LOG_KEPT) };
  }

  private state(): Record<string, unknown> {
    const { store, clock, limiter, faults, urls } = this.sources;
    const now = clock.now();
    const day = utcDay(now);
    const month = day.slice(0, 7);
    const gb = (value: number | null) => (value === null ? null : value * BYTES_PER_GB);
    const gateway = [...store.proxyUsers.values()]
      .map((user) => ({
        id: user.id,
        name: user.name,
        enabled: user.enabled,
        todayBytes: store.bytesOnDay(user.id, day),
        monthBytes: store.bytesInMonth(user.id, month),
        dailyCeiling: gb(user.limits.daily_gb),
        monthlyCeiling: gb(user.limits.monthly_gb),
      }))
      .filter((user) => user.monthBytes > 0)
      .sort((a, b) => b.todayBytes - a.todayBytes || a.name.localeCompare(b.name))
      .slice(0, GATEWAY_USERS_SHOWN);
    return {
      now: new Date(now).toISOString(),
      urls,
      windows: limiter.windowsAt(now),
      gateway,
      faults: faults.describe(),
      balanceCents: store.balanceCents,
    };
  }

  private broadcast(event: string, data: unknown): void {
    if (this.clients.size === 0) return;
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const client of this.clients) client.write(frame);
  }

  private send(res: ServerResponse, event: string, data: unknown): void {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }
}
