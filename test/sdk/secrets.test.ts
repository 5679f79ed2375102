import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientOptions, ProxyClient, ProxyError, type TransportEvent } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";

let server: ReferenceServer;
const events: TransportEvent[] = [];
const secrets: string[] = [];
const clientFor = (extra: Partial<ClientOptions> = {}) =>
  new ProxyClient({
    baseUrl: server.url,
    apiKey: server.rootKey,
    retryBaseDelayMs: 5,
    logger: (e) => events.push(e),
    ...extra,
  });

beforeAll(async () => {
  server = await startReferenceServer();
  secrets.push(server.rootKey);
});
afterAll(() => server.close());

/** Every way a user might print an error or a client. */
function renderings(value: unknown): string[] {
  const out = [String(value), inspect(value, { depth: Infinity, showHidden: true }), JSON.stringify(value) ?? ""];
  if (value instanceof Error) out.push(value.message, value.stack ?? "");
  return out;
}

function expectNoSecret(value: unknown): void {
  for (const text of renderings(value)) for (const secret of secrets) expect(text).not.toContain(secret);
}

async function failure(p: Promise<unknown>): Promise<ProxyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProxyError);
  return err as ProxyError;
}

describe("secrets never show up in errors, logs or the client", () => {
  it("returned secrets and passwords stay out of the log", async () => {
    const client = clientFor();
    const key = await client.keys.create({ name: "leaky", scopes: ["usage:read"] });
    const rotated = await client.keys.rotate(key.id, { grace_hours: 0 });
    const user = await client.proxyUsers.create({ name: "leaky-user" });
    secrets.push(key.secret, rotated.secret, user.password);
    expect(events.length).toBeGreaterThan(0);
    expectNoSecret(events);
    expectNoSecret(client);
  });

  it("errors of every kind carry none of them", async () => {
    const errors: ProxyError[] = [];
    const badKey = `live_${"Z".repeat(40)}`;
    secrets.push(badKey);
    errors.push(await failure(clientFor({ apiKey: badKey }).billing.balance()));
    const narrow = server.control.createKey({ name: "narrow-secret", scopes: ["usage:read"] });
    secrets.push(narrow.secret);
    errors.push(await failure(clientFor({ apiKey: narrow.secret }).keys.list()));
    errors.push(await failure(clientFor().proxyUsers.update("pu_unknownuser", { limits: { daily_gb: -1 } })));
    server.injectFault({ path: "/v1/keys", kind: "reset" });
    errors.push(await failure(clientFor({ maxRetries: 0 }).keys.create({ name: "x", scopes: ["usage:read"] })));
    server.injectFault({ path: "/v1/keys", kind: "latency", latencyMs: 500 });
    errors.push(await failure(clientFor({ maxRetries: 0 }).keys.list({}, { timeoutMs: 20 })));
    errors.push(await failure(clientFor().keys.list({}, { signal: AbortSignal.abort() })));
    expect(new Set(errors.map((e) => e.name))).toEqual(
      new Set([
        "AuthenticationError",
        "PermissionDeniedError",
        "BadRequestError",
        "ConnectionError",
        "TimeoutError",
        "RequestAbortedError",
      ]),
    );
    for (const err of errors) expectNoSecret(err);
    expectNoSecret(events);
  });

  it("a server that echoes the key or returns a secret in a bad shape leaks neither", async () => {
    const echoed = `live_${"E".repeat(40)}`;
    const returned = `live_${"R".repeat(40)}`;
    secrets.push(echoed, returned);
    const fake = createServer((req, res) => {
      if (req.method === "POST") {
        res.writeHead(201, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "not-a-key-id", secret: returned }));
        return;
      }
      res.writeHead(401, { "content-type": "application/json" });
      const message = `unknown key ${req.headers.authorization}`;
      res.end(
        JSON.stringify({
          error: { code: "invalid_api_key", message, request_id: "req_x", details: { got: req.headers.authorization } },
        }),
      );
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      const client = new ProxyClient({ baseUrl: url, apiKey: echoed, logger: (e) => events.push(e) });
      const authErr = await failure(client.billing.balance());
      expect(authErr.message).toContain("[redacted]");
      expectNoSecret(authErr);
      const shapeErr = await failure(client.keys.create({ name: "k", scopes: ["usage:read"] }));
      expect(shapeErr.name).toBe("ResponseValidationError");
      expectNoSecret(shapeErr);
      expectNoSecret(events);
    } finally {
      await new Promise<void>((resolve) => {
        fake.close(() => resolve());
        fake.closeAllConnections();
      });
    }
  });
});
