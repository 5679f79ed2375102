import dns from "node:dns";
import { syncBuiltinESMExports } from "node:module";
import { isIP } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  absoluteRequest,
  basic,
  type GatewayFixture,
  gatewayFixture,
  pipelined,
  statusOf,
  viaGateway,
} from "./harness";

let fixture: GatewayFixture | undefined;
/** Every name (not IP literal) this process asked the resolver for while a test ran (the gateway runs in the test's process). */
let asked: string[] = [];
const original = { lookup: dns.lookup, promisesLookup: dns.promises.lookup };

beforeEach(() => {
  asked = [];
  const record = (name: string) => {
    if (isIP(name) === 0) asked.push(name);
  };
  dns.lookup = ((name: string, ...rest: unknown[]) => {
    record(name);
    return (original.lookup as (...args: unknown[]) => void)(name, ...rest);
  }) as typeof dns.lookup;
  dns.promises.lookup = ((name: string, ...rest: unknown[]) => {
    record(name);
    return (original.promisesLookup as (...args: unknown[]) => unknown)(name, ...rest);
  }) as typeof dns.promises.lookup;
  syncBuiltinESMExports();
});

afterEach(async () => {
  dns.lookup = original.lookup;
  dns.promises.lookup = original.promisesLookup;
  syncBuiltinESMExports();
  await fixture?.close();
  fixture = undefined;
});

describe("gateway targets", () => {
  it("refuses a name outside the policy without resolving it, plain or CONNECT", async () => {
    fixture = await gatewayFixture();
    const { user, server } = fixture;
    const auth = basic(user.username, user.password);
    const plain = await viaGateway(server.gatewayUrl, "http://leak-probe.example:8080/x", auth);
    expect([plain.status, plain.headers["x-proxy-error"]]).toEqual([403, "target_not_allowed"]);
    const connect = `CONNECT leak-probe.example:443 HTTP/1.1\r\nHost: leak-probe.example:443\r\nProxy-Authorization: ${auth}\r\n\r\n`;
    const [refused] = await pipelined(server.gatewayUrl, [Buffer.from(connect)]);
    expect(statusOf(refused!)).toBe(403);
    expect(asked).toEqual([]);
  });

  it("forwards to localhost without asking a resolver", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const answer = await viaGateway(
      server.gatewayUrl,
      `http://localhost:${origin.port}/hello`,
      basic(user.username, user.password),
    );
    expect([answer.status, answer.body]).toEqual([200, "hello"]);
    expect(asked).toEqual([]);
  });

  it("sends the target the Host of the absolute URL, whatever Host the client sent", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const request = absoluteRequest(
      "GET",
      `${origin.url}/hello`,
      basic(user.username, user.password),
      "Connection: close\r\n",
    );
    const spoofed = request.replace(/\r\nHost: [^\r]*/, "\r\nHost: intranet.example");
    const [answer] = await pipelined(server.gatewayUrl, [Buffer.from(spoofed)]);
    expect(statusOf(answer!)).toBe(200);
    expect(origin.seen.map((seen) => seen.headers.host)).toEqual([`127.0.0.1:${origin.port}`]);
  });

  it("serves an HTTP/1.0 request without Host, giving the target one", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const request = `GET ${origin.url}/hello HTTP/1.0\r\nProxy-Authorization: ${basic(user.username, user.password)}\r\n\r\n`;
    const [answer] = await pipelined(server.gatewayUrl, [Buffer.from(request)]);
    expect(answer!.toString("latin1")).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nhello$/);
    expect(origin.seen.map((seen) => seen.headers.host)).toEqual([`127.0.0.1:${origin.port}`]);
  });

  it("refuses port 0 as a bad request, before any connection", async () => {
    fixture = await gatewayFixture();
    const { user, server } = fixture;
    const answer = await viaGateway(server.gatewayUrl, "http://127.0.0.1:0/", basic(user.username, user.password));
    expect([answer.status, answer.headers["x-proxy-error"]]).toEqual([400, "bad_request"]);
  });

  it("reads every spelling of a loopback address alike, plain and CONNECT", async () => {
    // A tunnel that carries nothing closes at once, so each connection ends by itself.
    fixture = await gatewayFixture({ gateway: { tunnelIdleTimeoutMs: 50 } });
    const { origin, user, server } = fixture;
    const auth = basic(user.username, user.password);
    const loopback = ["127.1", "0x7f000001", "2130706433", "0177.0.0.1", "localhost.", "[::ffff:127.0.0.1]"];
    const elsewhere = ["0x0a000001", "[::ffff:10.0.0.1]", "167772161"];
    const answers = async (host: string) => {
      const authority = `${host}:${origin.port}`;
      const plain = absoluteRequest("GET", `http://${authority}/hello`, auth, "Connection: close\r\n");
      const tunnel = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\nProxy-Authorization: ${auth}\r\n\r\n`;
      const [plainAnswer] = await pipelined(server.gatewayUrl, [Buffer.from(plain)]);
      const [tunnelAnswer] = await pipelined(server.gatewayUrl, [Buffer.from(tunnel)]);
      return [plainAnswer, tunnelAnswer].map((answer) => (answer ? statusOf(answer) : "no answer"));
    };
    for (const host of loopback) expect([host, ...(await answers(host))]).toEqual([host, 200, 200]);
    for (const host of elsewhere) expect([host, ...(await answers(host))]).toEqual([host, 403, 403]);
    expect(asked).toEqual([]);
  });
});
