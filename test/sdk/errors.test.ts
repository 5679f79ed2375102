import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ApiError,
  AuthenticationError,
  BadRequestError,
  type ClientOptions,
  ConflictError,
  ConnectionError,
  ErrorCode,
  NotFoundError,
  PaymentRequiredError,
  PermissionDeniedError,
  ProxyClient,
  ProxyError,
  RateLimitError,
  RequestAbortedError,
  ResponseValidationError,
  ServerError,
  TimeoutError,
} from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";

let server: ReferenceServer;
const fast = { retryBaseDelayMs: 5, retryMaxDelayMs: 20 };
const clientFor = (extra: Partial<ClientOptions> = {}) =>
  new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, ...fast, ...extra });

beforeAll(async () => {
  server = await startReferenceServer();
});
afterAll(() => server.close());

/** A stand-in for a broken or hostile service, to reach answers the reference server never gives. */
async function fakeServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const s = createServer(handler);
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      }),
  };
}

describe("each API error class, from the reference server", () => {
  it("400 BadRequestError names the field", async () => {
    const client = clientFor();
    const user = await client.proxyUsers.create({ name: "err-400" });
    const err = await client.proxyUsers.update(user.id, { limits: { daily_gb: 1_000_000 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    const bad = err as BadRequestError;
    expect(bad.message).toBe(
      `PATCH /v1/proxy-users/${user.id}: 400 invalid_request: limits.daily_gb: must be at most 100000`,
    );
    expect(bad.issues).toEqual([{ path: "limits.daily_gb", message: "must be at most 100000" }]);
    expect(bad.requestId).toMatch(/^req_/);
    expect(bad.method).toBe("PATCH");
    expect(bad.path).toBe(`/v1/proxy-users/${user.id}`);
    expect(client.stats.requests).toBe(2); // a 400 is never retried
  });

  it("401 AuthenticationError for an unknown key", async () => {
    const client = clientFor({ apiKey: `live_${"0".repeat(40)}` });
    const err = await client.billing.balance().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as ApiError).code).toBe("invalid_api_key");
    expect((err as ApiError).status).toBe(401);
  });

  it("402 PaymentRequiredError when the balance does not cover it", async () => {
    server.control.setBalance(0);
    try {
      await expect(clientFor().ips.allocate({ product: "isp", country: "us" })).rejects.toBeInstanceOf(
        PaymentRequiredError,
      );
    } finally {
      server.control.setBalance(100_000);
    }
  });

  it("403 PermissionDeniedError lists the scopes needed", async () => {
    const narrow = server.control.createKey({ name: "narrow", scopes: ["usage:read"] });
    const err = await clientFor({ apiKey: narrow.secret })
      .proxyUsers.list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionDeniedError);
    expect((err as PermissionDeniedError).code).toBe("insufficient_scope");
    expect((err as PermissionDeniedError).requiredScopes).toEqual(["proxy-users:read"]);
  });

  it("404 NotFoundError", async () => {
    const err = await clientFor()
      .proxyUsers.get("pu_doesnotexist")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).message).toMatch(/^GET \/v1\/proxy-users\/pu_doesnotexist: 404 not_found: /);
  });

  it("409 ConflictError on a taken name", async () => {
    const client = clientFor();
    await client.proxyUsers.create({ name: "err-409" });
    const err = await client.proxyUsers.create({ name: "err-409" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).code).toBe("conflict");
  });

  it("429 RateLimitError once retries are used up", async () => {
    const tight = await startReferenceServer({ rateLimitPerMinute: 1 });
    try {
      const client = new ProxyClient({ baseUrl: tight.url, apiKey: tight.rootKey, pacing: false, maxRetries: 0 });
      await client.billing.balance();
      const err = await client.billing.balance().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitError);
      expect((err as RateLimitError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect((err as RateLimitError).code).toBe("rate_limited");
    } finally {
      await tight.close();
    }
  });

  it("5xx ServerError once retries are used up, and maxRetries per call", async () => {
    server.injectFault({ path: "/v1/billing/balance", kind: "500", count: 2 });
    const client = clientFor();
    const err = await client.billing.balance({ maxRetries: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).status).toBe(500);
    expect(client.stats).toMatchObject({ requests: 2, retries: 1 });
    server.injectFault({ path: "/v1/billing/balance", kind: "503", count: 1 });
    await expect(clientFor({ maxRetries: 0 }).billing.balance()).rejects.toMatchObject({
      status: 503,
      code: "service_unavailable",
    });
  });
});

describe("failures without an API answer", () => {
  it("ConnectionError for a reset connection", async () => {
    server.injectFault({ path: "/v1/billing/balance", kind: "reset" });
    const err = await clientFor({ maxRetries: 0 })
      .billing.balance()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toBeInstanceOf(ProxyError);
    expect((err as Error).message).toMatch(/^GET \/v1\/billing\/balance: connection failed/);
  });

  it("ConnectionError for a refused connection, after retrying", async () => {
    const gone = await fakeServer(() => undefined);
    await gone.close();
    const client = new ProxyClient({ baseUrl: gone.url, apiKey: server.rootKey, ...fast, maxRetries: 2 });
    await expect(client.proxyUsers.create({ name: "never" })).rejects.toBeInstanceOf(ConnectionError);
    expect(client.stats.requests).toBe(3);
  });

  it("TimeoutError when an attempt takes too long", async () => {
    server.injectFault({ path: "/v1/billing/balance", kind: "latency", latencyMs: 1_000 });
    const err = await clientFor({ maxRetries: 0 })
      .billing.balance({ timeoutMs: 50 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/no answer within 50 ms/);
  });

  it("RequestAbortedError when the caller aborts", async () => {
    server.injectFault({ path: "/v1/billing/balance", kind: "latency", latencyMs: 1_000 });
    const ac = new AbortController();
    const pending = clientFor().billing.balance({ signal: ac.signal });
    setTimeout(() => ac.abort(new Error("user gave up")), 30);
    const err = await pending.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect((err as Error).cause).toEqual(new Error("user gave up"));
  });
});

describe("answers that break the contract", () => {
  it("ResponseValidationError when a 2xx body does not match the schema", async () => {
    const fake = await fakeServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ proxy_users: [{ id: "pu_abcdef", name: 7 }], next_cursor: null }));
    });
    try {
      const client = new ProxyClient({ baseUrl: fake.url, apiKey: server.rootKey });
      const err = await client.proxyUsers.list().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ResponseValidationError);
      expect((err as ResponseValidationError).issues.map((i) => i.path)).toContain("proxy_users.0.name");
      expect((err as Error).message).toMatch(/^GET \/v1\/proxy-users: the answer does not match the schema/);
    } finally {
      await fake.close();
    }
  });

  it("accepts unknown extra fields", async () => {
    const fake = await fakeServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ balance_cents: 5, currency: "usd", plan: "pro" }));
    });
    try {
      const client = new ProxyClient({ baseUrl: fake.url, apiKey: server.rootKey });
      await expect(client.billing.balance()).resolves.toMatchObject({ balance_cents: 5, currency: "usd" });
    } finally {
      await fake.close();
    }
  });

  it("keeps an error code this SDK does not know, as a newer service may send", async () => {
    const fake = await fakeServer((_req, res) => {
      res.writeHead(409, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "quota_frozen", message: "Frozen.", request_id: "req_1" } }));
    });
    try {
      const client = new ProxyClient({ baseUrl: fake.url, apiKey: server.rootKey, maxRetries: 0 });
      const err = await client.billing.topUp({ amount_cents: 100 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConflictError);
      expect(err).toMatchObject({ code: "quota_frozen", requestId: "req_1", serverMessage: "Frozen." });
      expect(ErrorCode.safeParse((err as ApiError).code).success).toBe(false);
    } finally {
      await fake.close();
    }
  });

  it("a non-JSON error page still gives a typed error", async () => {
    const fake = await fakeServer((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<h1>bad gateway</h1>");
    });
    try {
      const client = new ProxyClient({ baseUrl: fake.url, apiKey: server.rootKey, maxRetries: 0 });
      await expect(client.billing.balance()).rejects.toMatchObject({
        name: "ServerError",
        status: 502,
        code: "http_502",
      });
    } finally {
      await fake.close();
    }
  });
});
