import { ProxyAgent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import {
  basic,
  type GatewayFixture,
  gatewayFixture,
  hasCompleteAnswer,
  rawSession,
  statusOf,
  usageToday,
  viaGateway,
} from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function absoluteGet(targetUrl: string, auth: string | undefined): Buffer {
  const host = new URL(targetUrl).host;
  const credentials = auth ? `Proxy-Authorization: ${auth}\r\n` : "";
  return Buffer.from(`GET ${targetUrl} HTTP/1.1\r\nHost: ${host}\r\n${credentials}\r\n`, "latin1");
}

function absolutePost(targetUrl: string, auth: string, body: Buffer): Buffer {
  const host = new URL(targetUrl).host;
  const head = `POST ${targetUrl} HTTP/1.1\r\nHost: ${host}\r\nProxy-Authorization: ${auth}\r\nContent-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}

describe("gateway metering", () => {
  it("counts every byte both ways, headers and bodies, one request per exchange, on a keep-alive connection", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const auth = basic(user.username, user.password);
    const upload = Buffer.alloc(3000, 97);
    const session = await rawSession(
      server.gatewayUrl,
      [
        absoluteGet(`${origin.url}/hello`, auth),
        absolutePost(`${origin.url}/echo`, auth, upload),
        absoluteGet(`${origin.url}/bytes/20000`, auth),
      ],
      hasCompleteAnswer,
    );
    expect(session.answers.map(statusOf)).toEqual([200, 200, 200]);
    expect(await usageToday(fixture)).toEqual({ bytes: session.written + session.read, requests: 3 });
  });

  it("does not bill a refused exchange, and closes the connection after it", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const auth = basic(user.username, user.password);
    const requests = [
      absoluteGet(`${origin.url}/hello`, auth),
      absoluteGet(`${origin.url}/hello`, basic(user.username, "wrong-password")),
    ];
    const session = await rawSession(server.gatewayUrl, requests, hasCompleteAnswer);
    expect(session.answers.map(statusOf)).toEqual([200, 407]);
    expect(session.answers[1]!.toString("latin1")).toMatch(/\r\nconnection: close\r\n/i);
    const billed = requests[0]!.length + session.answers[0]!.length;
    expect(await usageToday(fixture)).toEqual({ bytes: billed, requests: 1 });
  });

  it("counts a tunnel: the CONNECT exchange and everything it carried", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const connectHead = Buffer.from(
      `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\nProxy-Authorization: ${basic(user.username, user.password)}\r\n\r\n`,
      "latin1",
    );
    const inner = absoluteGet(`${origin.url}/bytes/5000`, undefined);
    const session = await rawSession(server.gatewayUrl, [connectHead, inner], (received, index) =>
      index === 0 ? received.includes("\r\n\r\n") : hasCompleteAnswer(received),
    );
    expect(statusOf(session.answers[0]!)).toBe(200);
    expect(statusOf(session.answers[1]!)).toBe(200);
    await expect.poll(() => usageToday(fixture!)).toEqual({ bytes: session.written + session.read, requests: 1 });
  });

  it("meters what undici's ProxyAgent sends, plain and tunnelled, 1 MB bodies included", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const token = basic(user.username, user.password);
    const plain = new ProxyAgent({ uri: server.gatewayUrl, token, proxyTunnel: false });
    const tunnelled = new ProxyAgent({ uri: server.gatewayUrl, token });
    try {
      const megabyte = Buffer.alloc(1_000_000, 7);
      const echoed = await request(`${origin.url}/echo`, { method: "POST", body: megabyte, dispatcher: plain });
      expect((await echoed.body.arrayBuffer()).byteLength).toBe(1_000_000);
      const big = await request(`${origin.url}/bytes/1000000`, { dispatcher: tunnelled });
      expect((await big.body.arrayBuffer()).byteLength).toBe(1_000_000);
    } finally {
      await plain.close();
      await tunnelled.close();
    }
    await expect.poll(() => usageToday(fixture!)).toMatchObject({ requests: 2 });
    const { bytes } = await usageToday(fixture);
    expect(bytes).toBeGreaterThan(3_000_000);
    expect(bytes).toBeLessThan(3_010_000);
  });

  it("reports gateway traffic per day and per month through GET /v1/usage", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server, api } = fixture;
    const auth = basic(user.username, user.password);
    for (let i = 0; i < 3; i++)
      expect((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth)).status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const daily = await api.usage.get({ from: today, to: today });
    expect(daily.usage).toEqual([
      { proxy_user_id: user.id, period_start: today, bytes: daily.totals.bytes, requests: 3 },
    ]);
    const monthly = await api.usage.get({ from: today, to: today, granularity: "month" });
    expect(monthly.totals).toEqual(daily.totals);
  });
});
