import type { ServerResponse } from "node:http";
import { BYTES_PER_GB } from "../../contract/proxyUsers";
import { visibleText } from "../../contract/visibleText";
import { type Clock, utcDay } from "../clock";
import type { ServerControl } from "../control";
import type { FaultInjector } from "../faults";
import { redactPath } from "../logRedaction";
import type { RateLimiter } from "../rateLimit";
import type { RequestRecord } from "../requestLog";
import type { Store } from "../store";
import { ObjectMirror } from "./objects";
import { EventStreams } from "./streams";

/** Requests the console keeps for a page that opens late. */
export const LOG_KEPT = 200;
/** Changes and new log lines go out at most this often: 100 requests a second cost a page 4 updates, not 100. */
export const LOG_FLUSH_MS = 250;
/**
 * Changes that are sent at once rather than at the next tick: a tick's worth of a burst (thousands of
 * writes in 250 ms) would make one frame larger than a page's allowance (streams.ts), and every
 * page, readers included, would be dropped for it. About 300 bytes each, a frame stays near 150 KB.
 */
const CHANGES_PER_FRAME = 500;
/** Windows, gateway traffic and faults go out this often. */
export const STATE_TICK_MS = 1000;
/** The gateway users the console charts, those with the most traffic today first. */
export const GATEWAY_USERS_SHOWN = 50;
/**
 * Characters of a request path the console shows. A path of a thousand unknown segments would
 * otherwise cost the redaction a thousand lookups and the page ten kilobytes, per line.
 */
export const PATH_SHOWN = 200;
/** A page whose stream was closed (it fell behind) asks again after this long. */
const RECONNECT_MS = 1000;

export interface ConsoleSources {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  faults: FaultInjector;
  control: ServerControl;
  /** Shown in the header, so the page says which server it watches. */
  urls: { api: string; gateway: string };
}

/** What the tests and the bench read of the console's streams. */
export interface ConsoleStats {
  streams: number;
  /** Streams closed because their reader fell behind. */
  dropped: number;
  /** Bytes each open stream has waiting in the server. */
  queuedBytes: number[];
  /** Frames built: one per tick that had news, whatever the number of streams. */
  framesBuilt: number;
  /** Times the full object list was written out for opening pages. */
  listsBuilt: number;
}

/** A request as the page gets it: the path redacted exactly as the request log redacts it, and cut short. */
function shown({ rawPath, ...record }: RequestRecord): string {
  const cut = (text: string) => (text.length > PATH_SHOWN ? `${text.slice(0, PATH_SHOWN)}…` : text);
  return JSON.stringify({ ...record, path: cut(visibleText(redactPath(cut(rawPath)))) });
}

const frame = (event: string, json: string): string => `event: ${event}\ndata: ${json}\n\n`;

/**
 * What the console shows, pushed to every open page as server-sent events. The hot path (a request
 * finishing, an object changing) only appends to a list; everything else happens on one timer, only
 * while a page is open, and once for all pages: a page opening gets the list as it was last written
 * out, then the changes. Nothing here holds a secret: objects are rendered as the API lists them
 * without the key hint, and paths are the request log's redacted ones.
 */
export class ConsoleHub {
  private readonly streams = new EventStreams();
  private readonly mirror: ObjectMirror;
  private readonly recent: RequestRecord[] = [];
  private pending: RequestRecord[] = [];
  /** The last LOG_KEPT lines as sent, while pages are open: a page opening gets them without a redaction. */
  private shownRecent: string[] = [];
  private opening: { objects?: Buffer; log?: Buffer; state?: Buffer } = {};
  private timer: NodeJS.Timeout | undefined;
  private ticks = 0;
  private framesBuilt = 0;
  private listsBuilt = 0;
  private burstQueued = false;

  constructor(private readonly sources: ConsoleSources) {
    this.mirror = new ObjectMirror(sources.store, sources.clock, (writes) => {
      if (writes < CHANGES_PER_FRAME || this.burstQueued) return;
      // Not inside the store's write: on the next turn, once the burst's synchronous writes are done.
      this.burstQueued = true;
      setImmediate(() => {
        this.burstQueued = false;
        this.sendChanges();
      });
    });
  }

  /** From the request log, for every API request. */
  readonly onRequest = (record: RequestRecord): void => {
    this.recent.push(record);
    if (this.recent.length > LOG_KEPT * 2) this.recent.splice(0, this.recent.length - LOG_KEPT);
    if (this.streams.size > 0) this.pending.push(record);
  };

  /** A page subscribes: it gets everything at once, then the changes. */
  subscribe(res: ServerResponse): void {
    if (this.streams.full) {
      res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "5" });
      res.end("too many console pages are open\n");
      return;
    }
    if (this.streams.size === 0) this.startWatching();
    // Changes not yet sent go to the open pages first, so the list this page gets and the changes
    // every page gets next agree.
    this.sendChanges();
    const { opening } = this;
    if (!opening.objects) {
      this.listsBuilt++;
      opening.objects = Buffer.from(`retry: ${RECONNECT_MS}\n\n${frame("objects", this.mirror.list())}`);
    }
    opening.log ??= Buffer.from(frame("log", `{"records":[${this.shownRecent.join(",")}],"count":0}`));
    opening.state ??= Buffer.from(frame("state", JSON.stringify(this.state())));
    this.streams.open(res, [opening.objects, opening.log, opening.state], () => {
      if (this.streams.size === 0) this.stopWatching();
    });
  }

  stats(): ConsoleStats {
    return {
      streams: this.streams.size,
      dropped: this.streams.dropped,
      queuedBytes: this.streams.queuedBytes(),
      framesBuilt: this.framesBuilt,
      listsBuilt: this.listsBuilt,
    };
  }

  close(): void {
    this.streams.closeAll();
    this.stopWatching();
  }

  private startWatching(): void {
    this.mirror.start();
    this.shownRecent = this.recent.slice(-LOG_KEPT).map(shown);
    this.pending = [];
    this.opening = {};
    this.ticks = 0;
    this.timer ??= setInterval(() => this.tick(), LOG_FLUSH_MS).unref();
  }

  private stopWatching(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.mirror.stop();
    this.pending = [];
    this.shownRecent = [];
    this.opening = {};
  }

  /** The objects' changes since the last frame, as a frame, or "" when none. */
  private changesFrame(): string {
    const changes = this.mirror.changes();
    if (changes === undefined) return "";
    this.opening.objects = undefined;
    return frame("changes", changes);
  }

  private sendChanges(): void {
    const changes = this.changesFrame();
    if (changes) this.send(changes);
  }

  /** One frame a tick at most, changes, log and state together: one write per stream. */
  private tick(): void {
    const parts: string[] = [this.changesFrame()];
    if (this.pending.length > 0) {
      // The page shows the latest lines; `count` tells it how many arrived, for its rate.
      const count = this.pending.length;
      const batch = this.pending.slice(-LOG_KEPT).map(shown);
      this.pending = [];
      this.shownRecent = this.shownRecent.concat(batch).slice(-LOG_KEPT);
      this.opening.log = undefined;
      parts.push(frame("log", `{"records":[${batch.join(",")}],"count":${count}}`));
    }
    if (++this.ticks % Math.round(STATE_TICK_MS / LOG_FLUSH_MS) === 0) {
      const state = frame("state", JSON.stringify(this.state()));
      this.opening.state = Buffer.from(state);
      parts.push(state);
    }
    const news = parts.join("");
    if (news) this.send(news);
  }

  private send(text: string): void {
    this.framesBuilt++;
    this.streams.send(Buffer.from(text));
  }

  private state(): Record<string, unknown> {
    const { store, clock, limiter, faults, urls } = this.sources;
    const now = clock.now();
    const day = utcDay(now);
    const month = day.slice(0, 7);
    const gb = (value: number | null) => (value === null ? null : value * BYTES_PER_GB);
    const gateway = [];
    for (const user of store.proxyUsers.values()) {
      const monthBytes = store.bytesInMonth(user.id, month);
      if (monthBytes === 0) continue;
      gateway.push({
        id: user.id,
        name: visibleText(user.name),
        enabled: user.enabled,
        todayBytes: store.bytesOnDay(user.id, day),
        monthBytes,
        dailyCeiling: gb(user.limits.daily_gb),
        monthlyCeiling: gb(user.limits.monthly_gb),
      });
    }
    gateway.sort((a, b) => b.todayBytes - a.todayBytes || a.name.localeCompare(b.name));
    return {
      now: new Date(now).toISOString(),
      urls,
      windows: limiter.windowsAt(now),
      gateway: gateway.slice(0, GATEWAY_USERS_SHOWN),
      faults: faults.describe(),
      balanceCents: store.balanceCents,
    };
  }
}
