import dns from "node:dns";
import { syncBuiltinESMExports } from "node:module";
import { isIP } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseAuthority } from "../../server/gateway/targets";
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

  it("reads CONNECT's port as written, 80 included: a loopback target is tried, any other is not allowed", async () => {
    fixture = await gatewayFixture({ gateway: { tunnelIdleTimeoutMs: 50 } });
    const { user, server } = fixture;
    const auth = basic(user.username, user.password);
    const connectTo = async (authority: string) => {
      const head = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\nProxy-Authorization: ${auth}\r\n\r\n`;
      const [answer] = await pipelined(server.gatewayUrl, [Buffer.from(head)]);
      const proxyError = /\r\nx-proxy-error: *(\S+)/i.exec(answer?.toString("latin1") ?? "")?.[1];
      return [authority, answer ? statusOf(answer) : "no answer", proxyError];
    };
    // Nothing listens on port 80 here (it would take privileges to bind it): the tunnel was tried.
    for (const authority of ["127.0.0.1:80", "[::1]:80", "localhost:80"]) {
      const answer = await connectTo(authority);
      if (answer[1] === 200) expect(answer).toEqual([authority, 200, undefined]);
      else expect(answer).toEqual([authority, 502, "target_unreachable"]);
    }
    for (const authority of ["example.com:80", "10.0.0.1:80", "[2001:db8::1]:80"])
      expect(await connectTo(authority)).toEqual([authority, 403, "target_not_allowed"]);
    expect(asked).toEqual([]);
  });

  it("takes one port in a CONNECT authority, in range, after a host that holds no colon outside brackets", () => {
    expect(parseAuthority("127.0.0.1:80")).toEqual({ host: "127.0.0.1", port: 80 });
    expect(parseAuthority("[::1]:80")).toEqual({ host: "::1", port: 80 });
    expect(parseAuthority("Example.COM:443")).toEqual({ host: "example.com", port: 443 });
    for (const refused of [
      "127.0.0.1",
      "127.0.0.1:0",
      "127.0.0.1:65536",
      "127.0.0.1:80:80",
      "::1:80",
      "a@b:80",
      "[::1]x:80",
    ])
      expect([refused, parseAuthority(refused)]).toEqual([refused, undefined]);
  });
});
