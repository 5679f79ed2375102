import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  isNotFound,
  NotFoundError,
  PaymentRequiredError,
  PermissionDeniedError,
  ProxyClient,
  ProxyError,
  RateLimitError,
  ResponseValidationError,
  resolvePath,
  ServerError,
} from "../../sdk";
import { errorFromResponse } from "../../sdk/core/errors";
import { type Page, PagePromise } from "../../sdk/core/pagination";
import {
  backoffMs,
  mayRetry,
  parseRetryAfter,
  rateLimitWaitMs,
  retriableAfterAmbiguousFailure,
} from "../../sdk/core/retry";
import { Semaphore } from "../../sdk/core/semaphore";

const body = (code: string, message: string, details?: object) =>
  JSON.stringify({ error: { code, message, request_id: "req_1", details } });
const fromStatus = (status: number, text: string, retryAfterSeconds?: number) =>
  errorFromResponse({
    method: "PATCH",
    path: "/v1/proxy-users/pu_x",
    status,
    text,
    requestId: "req_hdr",
    retryAfterSeconds,
  });

describe("error mapping", () => {
  it("maps each status to its class, all under ApiError and ProxyError", () => {
    const cases: [number, new (...a: never[]) => ApiError][] = [
      [400, BadRequestError],
      [401, AuthenticationError],
      [402, PaymentRequiredError],
      [403, PermissionDeniedError],
      [404, NotFoundError],
      [409, ConflictError],
      [429, RateLimitError],
      [500, ServerError],
      [503, ServerError],
    ];
    for (const [status, cls] of cases) {
      const err = fromStatus(status, body("some_code", "it went wrong"));
      expect(err).toBeInstanceOf(cls);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toBeInstanceOf(ProxyError);
      expect(err.status).toBe(status);
      expect(err.name).toBe(cls.name);
    }
    expect(fromStatus(418, body("teapot", "short and stout")).constructor).toBe(ApiError);
  });

  it("reads one sentence naming method, path, status, code and the server's message", () => {
    const err = fromStatus(
      400,
      body("invalid_request", "limits.daily_gb: must be at most 100000", {
        issues: [{ path: "limits.daily_gb", message: "must be at most 100000" }],
      }),
    );
    expect(err.message).toBe(
      "PATCH /v1/proxy-users/pu_x: 400 invalid_request: limits.daily_gb: must be at most 100000",
    );
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).issues).toEqual([{ path: "limits.daily_gb", message: "must be at most 100000" }]);
    expect(err.requestId).toBe("req_1");
    expect(err.code).toBe("invalid_request");
  });

  it("exposes required scopes and retry-after", () => {
    const denied = fromStatus(
      403,
      body("insufficient_scope", "needs more", { required_scopes: ["limits:write"] }),
    ) as PermissionDeniedError;
    expect(denied.requiredScopes).toEqual(["limits:write"]);
    const limited = fromStatus(429, body("rate_limited", "slow down"), 7) as RateLimitError;
    expect(limited.retryAfterSeconds).toBe(7);
  });

  it("still gives a typed error when the body is not the contract's", () => {
    const err = fromStatus(502, "<html>bad gateway</html>");
    expect(err).toBeInstanceOf(ServerError);
    expect(err.code).toBe("http_502");
    expect(err.requestId).toBe("req_hdr");
    expect(err.message).toMatch(/^PATCH \/v1\/proxy-users\/pu_x: 502 http_502: /);
  });

  it("isNotFound is true only for 404s", () => {
    expect(isNotFound(fromStatus(404, body("not_found", "no such user")))).toBe(true);
    expect(isNotFound(fromStatus(409, body("conflict", "taken")))).toBe(false);
    expect(isNotFound(new Error("x"))).toBe(false);
  });
});

describe("retry policy", () => {
  it("retries POST after an ambiguous failure only with an idempotency key", () => {
    expect(retriableAfterAmbiguousFailure("GET", false)).toBe(true);
    expect(retriableAfterAmbiguousFailure("DELETE", false)).toBe(true);
    expect(retriableAfterAmbiguousFailure("PATCH", false)).toBe(true);
    expect(retriableAfterAmbiguousFailure("POST", false)).toBe(false);
    expect(retriableAfterAmbiguousFailure("POST", true)).toBe(true);
  });

  it("backs off with full jitter under a doubling, capped ceiling", () => {
    const opts = { baseMs: 100, maxMs: 1000 };
    expect(backoffMs(0, { ...opts, random: () => 0.999 })).toBe(99);
    expect(backoffMs(3, { ...opts, random: () => 0.999 })).toBe(799);
    expect(backoffMs(10, { ...opts, random: () => 0.999 })).toBe(999);
    expect(backoffMs(3, { ...opts, random: () => 0 })).toBe(0);
  });

  it("waits at least the retry-after, capped, with a little jitter on top", () => {
    expect(rateLimitWaitMs(3, 60_000, () => 0)).toBe(3000);
    expect(rateLimitWaitMs(3, 60_000, () => 0.999)).toBeLessThan(3000 + 300);
    expect(rateLimitWaitMs(3, 60_000, () => 0.999)).toBeGreaterThan(3000 + 250);
    expect(rateLimitWaitMs(120, 10_000, () => 0)).toBe(10_000);
    expect(rateLimitWaitMs(undefined, 60_000, () => 0)).toBe(1000);
  });

  it("retries while the next attempt starts within the window and the deadline; a count caps it only when set", () => {
    const budget = { retries: 50, startedAt: 0, delayMs: 1_000, windowMs: 120_000, maxRetries: undefined };
    expect(mayRetry({ ...budget, now: 100_000, deadline: undefined })).toBe(true);
    expect(mayRetry({ ...budget, now: 119_000, deadline: undefined })).toBe(true);
    expect(mayRetry({ ...budget, now: 119_001, deadline: undefined })).toBe(false);
    expect(mayRetry({ ...budget, now: 10_000, deadline: 11_000 })).toBe(false);
    expect(mayRetry({ ...budget, now: 10_000, deadline: undefined, maxRetries: 50 })).toBe(false);
    expect(mayRetry({ ...budget, now: 10_000, deadline: undefined, maxRetries: 51 })).toBe(true);
  });

  it("parses retry-after as seconds or an HTTP date", () => {
    expect(parseRetryAfter("5")).toBe(5);
    expect(parseRetryAfter(" ")).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6);
  });
});

describe("resolvePath", () => {
  it("URL-encodes ids and refuses ids that would change the endpoint", () => {
    expect(resolvePath("/v1/proxy-users/{id}", { id: "pu_abc" })).toBe("/v1/proxy-users/pu_abc");
    expect(resolvePath("/v1/keys/{id}", { id: "a/b?c#d e" })).toBe("/v1/keys/a%2Fb%3Fc%23d%20e");
    for (const bad of ["", ".", ".."]) expect(() => resolvePath("/v1/keys/{id}", { id: bad })).toThrow(ProxyError);
    expect(() => resolvePath("/v1/keys/{id}", {})).toThrow(/missing/);
  });
});

describe("PagePromise", () => {
  const pages: Record<string, Page<number>> = {
    start: { items: [1, 2], nextCursor: "b" },
    b: { items: [3], nextCursor: "c" },
    c: { items: [4, 5], nextCursor: null },
  };
  const fetcher = (calls: string[]) => async (cursor: string | undefined) => {
    calls.push(cursor ?? "start");
    return pages[cursor ?? "start"]!;
  };

  it("awaits to the first page and iterates every item once, lazily", async () => {
    const calls: string[] = [];
    const p = new PagePromise(fetcher(calls));
    expect(calls).toEqual([]);
    expect(await p).toEqual(pages.start);
    const items: number[] = [];
    for await (const n of p) items.push(n);
    expect(items).toEqual([1, 2, 3, 4, 5]);
    expect(calls).toEqual(["start", "b", "c"]);
  });

  it("stops on a cursor that does not advance", async () => {
    const p = new PagePromise<number>(async () => ({ items: [1], nextCursor: "same" }));
    await expect(p.all()).rejects.toBeInstanceOf(ResponseValidationError);
  });
});

describe("Semaphore", () => {
  it("never lets more than its size through and serves waiters in order", async () => {
    const sem = new Semaphore(2);
    const order: number[] = [];
    const r1 = await sem.acquire();
    const r2 = await sem.acquire();
    const p3 = sem.acquire().then((r) => {
      order.push(3);
      return r;
    });
    const p4 = sem.acquire().then((r) => {
      order.push(4);
      return r;
    });
    expect(sem.waiting).toBe(2);
    r1();
    r1(); // a second release of the same slot must not free another one
    await p3;
    expect(sem.waiting).toBe(1);
    r2();
    (await p4)();
    expect(order).toEqual([3, 4]);
  });

  it("drops an aborted waiter", async () => {
    const sem = new Semaphore(1);
    await sem.acquire();
    const ac = new AbortController();
    const p = sem.acquire(ac.signal);
    ac.abort(new Error("stop"));
    await expect(p).rejects.toThrow("stop");
    expect(sem.waiting).toBe(0);
  });
});

describe("the client never shows its key", () => {
  it("keeps apiKey out of enumeration, JSON and inspect", () => {
    const apiKey = "live_" + "S3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3t";
    const client = new ProxyClient({ baseUrl: "http://127.0.0.1:1", apiKey });
    expect(client.apiKey).toBe(apiKey);
    expect(Object.keys(client)).not.toContain("apiKey");
    for (const text of [
      JSON.stringify(client),
      inspect(client, { depth: 10, showHidden: true }),
      inspect(client, { customInspect: false, showHidden: true, depth: 10 }),
      String(client),
      inspect(client.proxyUsers, { depth: 10, showHidden: true }),
    ]) {
      expect(text).not.toContain(apiKey);
    }
  });
});
