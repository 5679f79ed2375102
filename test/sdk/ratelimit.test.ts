import { describe, expect, it } from "vitest";
import { ProxyClient, RequestAbortedError, type TransportEvent } from "../../sdk";
import { type Clock, ManualClock, startReferenceServer } from "../../server";

/** The server's minute windows, shifted so the current one ends `msLeft` from now: a storm then lasts seconds, not a minute. */
function clockEndingWindowIn(msLeft: number): Clock {
  const offset = 60_000 - (Date.now() % 60_000) - msLeft;
  return { now: () => Date.now() + offset };
}

describe("a storm of 429s", () => {
  it("without pacing: every over-limit call waits its retry-after once, then succeeds in the next window", async () => {
    const limit = 40;
    const calls = 70;
    // The server's clock stands 5 s before its window ends until every first attempt has its answer
    // (40 served, 30 refused with retry-after 5), then moves into the next window: the retries, each
    // waiting its retry-after, meet that one however slowly a loaded machine sent the first attempts.
    const windowEnd = Date.parse("2030-01-01T00:01:00Z");
    const clock = new ManualClock(windowEnd - 5_000);
    const server = await startReferenceServer({ rateLimitPerMinute: limit, clock });
    try {
      const events: TransportEvent[] = [];
      const client = new ProxyClient({
        baseUrl: server.url,
        apiKey: server.rootKey,
        pacing: false,
        logger: (e) => events.push(e),
      });
      const answered = Promise.all(Array.from({ length: calls }, () => client.billing.balance()));
      await expect.poll(() => server.stats().rateLimited, { timeout: 60_000, interval: 5 }).toBe(calls - limit);
      clock.set(windowEnd);
      const results = await answered;
      expect(results).toHaveLength(calls);
      // Had any retry gone out before its retry-after, it would have met a second 429.
      expect(client.stats.rateLimited).toBe(calls - limit);
      expect(server.stats().rateLimited).toBe(calls - limit);
      const waits = events.flatMap((e) => (e.type === "retry" ? [e.delayMs] : []));
      expect(waits).toHaveLength(calls - limit);
      for (const ms of waits) expect(ms).toBeGreaterThanOrEqual(1_000);
    } finally {
      await server.close();
    }
  });

  it("with pacing: more calls than the window allows meet no 429; past the budget it waits, then probes", async () => {
    // 44 calls, 40 left in a window that ends in 3 s: the pacer must stop at 40, wait for the next
    // window, send one probe there and the last 3 after its answer.
    const limit = 40;
    const calls = 44;
    const server = await startReferenceServer({ rateLimitPerMinute: limit, clock: clockEndingWindowIn(3_000) });
    try {
      const events: TransportEvent[] = [];
      const client = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, logger: (e) => events.push(e) });
      const results = await Promise.all(Array.from({ length: calls }, () => client.billing.balance()));
      expect(results).toHaveLength(calls);
      expect(client.stats.rateLimited).toBe(0);
      expect(server.stats().rateLimited).toBe(0);
      expect(server.stats().requests).toBe(calls);
      const remaining = (e: TransportEvent) => (e.type === "response" ? e.rateLimit?.remaining : undefined);
      const spent = events.findIndex((e) => remaining(e) === 0);
      const probed = events.findIndex((e, i) => i > spent && remaining(e) === limit - 1);
      const requestsIn = (from: number, to: number) =>
        events.slice(from, to).filter((e) => e.type === "request").length;
      expect(spent).toBeGreaterThan(0);
      expect(requestsIn(0, spent)).toBe(limit);
      expect(requestsIn(spent, probed)).toBe(1);
      expect(requestsIn(probed, events.length)).toBe(calls - limit - 1);
    } finally {
      await server.close();
    }
  });

  it("with pacing: calls that fit in the window's budget all go out at once", async () => {
    // The server's clock is frozen 50 s before the window ends: nothing here may wait for a reset.
    const clock = new ManualClock(Date.parse("2030-01-01T00:00:10Z"));
    const server = await startReferenceServer({ rateLimitPerMinute: 40, clock });
    try {
      const events: TransportEvent[] = [];
      const client = new ProxyClient({
        baseUrl: server.url,
        apiKey: server.rootKey,
        maxConcurrency: 40,
        logger: (e) => events.push(e),
      });
      await Promise.all(Array.from({ length: 30 }, () => client.billing.balance()));
      expect(server.stats()).toMatchObject({ requests: 30, rateLimited: 0 });
      // One probe, then the 29 others together: all of them in flight before the first answers.
      let inFlight = 0;
      let most = 0;
      for (const e of events) {
        if (e.type === "request") most = Math.max(most, ++inFlight);
        if (e.type === "response") inFlight--;
      }
      expect(most).toBe(29);
    } finally {
      await server.close();
    }
  });

  it("with a reserve: the client stops short of it and another user of the key spends it without a 429", async () => {
    const clock = new ManualClock(Date.parse("2030-01-01T00:00:10Z")); // frozen: one window throughout
    const server = await startReferenceServer({ rateLimitPerMinute: 40, clock });
    try {
      const client = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, rateLimitReserve: 10 });
      await Promise.all(Array.from({ length: 30 }, () => client.billing.balance()));
      expect(server.stats()).toMatchObject({ requests: 30, rateLimited: 0 });
      // A 31st call would eat into the reserve: it is held, and the server never sees it.
      const held = new AbortController();
      const pending = client.billing.balance({ signal: held.signal });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(server.stats().requests).toBe(30);
      held.abort(new Error("the test is done waiting"));
      await expect(pending).rejects.toBeInstanceOf(RequestAbortedError);
      const other = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, pacing: false, maxRetries: 0 });
      await Promise.all(Array.from({ length: 10 }, () => other.billing.balance()));
      expect(server.stats()).toMatchObject({ requests: 40, rateLimited: 0 });
    } finally {
      await server.close();
    }
  });

  it("refuses a reserve that is not a whole number of requests", () => {
    for (const rateLimitReserve of [-1, 1.5, Number.NaN]) {
      expect(() => new ProxyClient({ baseUrl: "http://127.0.0.1:1", apiKey: "k", rateLimitReserve })).toThrow(
        /rateLimitReserve must be a whole number/,
      );
    }
  });

  it("with pacing, a 429 caused by someone else holds every call of the client until retry-after", async () => {
    const server = await startReferenceServer({ rateLimitPerMinute: 30, clock: clockEndingWindowIn(3_000) });
    try {
      // Another process spends the key's budget behind our client's back.
      const other = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, pacing: false, maxRetries: 0 });
      await Promise.all(Array.from({ length: 30 }, () => other.billing.balance()));
      const events: TransportEvent[] = [];
      const client = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, logger: (e) => events.push(e) });
      // Four calls: the probe, then three that the next window's budget covers.
      await Promise.all(Array.from({ length: 4 }, () => client.billing.balance()));
      // Only the probe meets the 429; everything else waits behind it.
      expect(client.stats.rateLimited).toBe(1);
      const limited = events.findIndex((e) => e.type === "response" && e.status === 429);
      const firstSentAfter = events.findIndex((e, i) => i > limited && e.type === "request");
      expect(events.slice(0, limited).filter((e) => e.type === "request")).toHaveLength(1);
      expect(firstSentAfter).toBeGreaterThan(limited);
    } finally {
      await server.close();
    }
  });

  it("caps a long retry-after at retryAfterCapMs", async () => {
    const clock = new ManualClock(Date.parse("2030-01-01T00:00:10Z")); // 50 s left in the window, and frozen
    const server = await startReferenceServer({ rateLimitPerMinute: 1, clock });
    try {
      const events: TransportEvent[] = [];
      const client = new ProxyClient({
        baseUrl: server.url,
        apiKey: server.rootKey,
        pacing: false,
        retryAfterCapMs: 100,
        maxRetries: 10,
        logger: (e) => events.push(e),
      });
      await client.billing.balance();
      const second = client.billing.balance();
      // Let it bounce off the frozen window a few times, then open the next one.
      await new Promise((r) => setTimeout(r, 350));
      clock.advance(60_000);
      await second;
      const retries = events.flatMap((e) => (e.type === "retry" ? [e.delayMs] : []));
      expect(retries.length).toBeGreaterThanOrEqual(2);
      for (const ms of retries) {
        expect(ms).toBeGreaterThanOrEqual(100);
        expect(ms).toBeLessThan(100 + 60);
      }
      expect(client.stats.rateLimited).toBe(retries.length);
    } finally {
      await server.close();
    }
  });
});
