import { ProxyClient } from "../sdk";
import type { ReferenceServer, Stats } from "../server";
import type { WindowAtStart } from "./floors";
import { freshWindow, WINDOW_MS } from "./floors";
import { ProviderMemory, timed, type WindowClock } from "./harness";

/**
 * One measured phase of a stack case: it starts as a rate-limit window opens (after another client
 * spent its share, in a crowded case), and reports the time, the requests the server saw and when.
 */

export const RATE_LIMIT_PER_MINUTE = 600;

export interface Measured {
  seconds: number;
  requests: number;
  rateLimited: number;
  /** Requests by route, e.g. "POST /v1/proxy-users". */
  byRoute: Record<string, number>;
  /** Peak VmHWM of the dynamic-provider process, MiB. */
  providerMb: number;
  /** Seconds from the start of the phase to its first and to its last API request. */
  firstRequest: number;
  lastRequest: number;
  /** Longest time between two requests the server saw: a wait for a window's reset shows here. */
  longestPause: number;
  /** The window the phase found: what was left of its budget and of its time. */
  window: WindowAtStart;
  /** 429s the crowding client met while it spent its share. */
  otherRateLimited: number;
}

function summarize(stats: Stats): Pick<Measured, "requests" | "rateLimited" | "byRoute"> {
  return { requests: stats.requests, rateLimited: stats.rateLimited, byRoute: stats.byRoute };
}

/** When the server saw requests: the server's log hook calls `seen` once per request. */
export class RequestSpan {
  #started = 0;
  #first = NaN;
  #last = NaN;
  #longestPause = 0;

  start(): void {
    this.#started = performance.now();
    this.#first = this.#last = NaN;
    this.#longestPause = 0;
  }

  seen = (): void => {
    const at = (performance.now() - this.#started) / 1000;
    if (Number.isNaN(this.#first)) this.#first = at;
    else this.#longestPause = Math.max(this.#longestPause, at - this.#last);
    this.#last = at;
  };

  get figures() {
    return { firstRequest: this.#first, lastRequest: this.#last, longestPause: this.#longestPause };
  }
}

export interface PhaseContext {
  server: ReferenceServer;
  clock: WindowClock;
  span: RequestSpan;
  crowd: number;
}

/**
 * Runs `work` as a measured phase: a fresh rate-limit window (crowded first, if asked), fresh stats,
 * provider memory sampled.
 */
export async function phase(
  { server, clock, span, crowd }: PhaseContext,
  work: () => Promise<unknown>,
): Promise<Measured> {
  clock.openWindowOnNextRequest();
  let window = freshWindow(RATE_LIMIT_PER_MINUTE);
  let otherRateLimited = 0;
  if (crowd > 0) {
    const other = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, maxConcurrency: 16 });
    const spent = Math.floor(RATE_LIMIT_PER_MINUTE * crowd);
    await Promise.all(Array.from({ length: spent }, () => other.billing.balance()));
    otherRateLimited = other.stats.rateLimited;
    window = {
      limit: RATE_LIMIT_PER_MINUTE,
      left: RATE_LIMIT_PER_MINUTE - spent,
      windowLeftMs: WINDOW_MS - (clock.now() % WINDOW_MS),
    };
  }
  server.resetStats();
  span.start();
  const memory = new ProviderMemory();
  memory.start();
  try {
    const { seconds } = await timed(work);
    return {
      seconds,
      ...summarize(server.stats()),
      providerMb: memory.stop(),
      ...span.figures,
      window,
      otherRateLimited,
    };
  } catch (error) {
    memory.stop();
    throw error;
  }
}
