import { connect } from "node:net";
import { ProxyAgent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../server";
import { basic, type GatewayFixture, gatewayFixture, hasCompleteAnswer, usageToday, viaGateway } from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

/** The gateway's verdict on a new request right now: 200, or the refusal's reason. */
async function verdict(f: GatewayFixture, password = f.user.password): Promise<string> {
  const answer = await viaGateway(f.server.gatewayUrl, `${f.origin.url}/hello`, basic(f.user.username, password));
  return answer.status === 200 ? "200" : `${answer.status} ${answer.headers["x-proxy-error"]}`;
}

describe("gateway propagation", () => {
  it("applies a disable, a re-enable, a limit change and a deletion after the 2 s default, on the server clock", async () => {
    const clock = new ManualClock(Date.UTC(2025, 2, 10, 12));
    fixture = await gatewayFixture({ clock, gateway: { propagationDelayMs: undefined } });
    const f = fixture;
    const { api, user } = f;

    await api.proxyUsers.disable(user.id);
    expect(await verdict(f)).toBe("200");
    clock.advance(1999);
    expect(await verdict(f)).toBe("200");
    clock.advance(1);
    expect(await verdict(f)).toBe("407 proxy_user_disabled");

    await api.proxyUsers.update(user.id, { enabled: true });
    clock.advance(1999);
    expect(await verdict(f)).toBe("407 proxy_user_disabled");
    clock.advance(1);
    expect(await verdict(f)).toBe("200");

    await api.proxyUsers.update(user.id, { limits: { daily_gb: 0 } });
    expect(await verdict(f)).toBe("200");
    clock.advance(2000);
    expect(await verdict(f)).toBe("407 traffic_limit_reached");
    await api.proxyUsers.update(user.id, { limits: { daily_gb: null } });
    clock.advance(2000);
    expect(await verdict(f)).toBe("200");

    await api.proxyUsers.delete(user.id);
    expect(await verdict(f)).toBe("200");
    clock.advance(2000);
    expect(await verdict(f)).toBe("407 invalid_credentials");
  });

  it("takes a delay set at start or while running, on the real clock", async () => {
    fixture = await gatewayFixture({ gateway: { propagationDelayMs: 60_000 } });
    const f = fixture;
    await f.api.proxyUsers.disable(f.user.id);
    expect(await verdict(f)).toBe("200");
    // A change is due at the delay in force when it was made; a shorter delay applies to later changes.
    f.server.gateway.setPropagationDelay(300);
    await f.api.proxyUsers.update(f.user.id, { enabled: true });
    await f.api.proxyUsers.disable(f.user.id);
    await expect.poll(() => verdict(f), { timeout: 10_000, interval: 100 }).toBe("407 proxy_user_disabled");
  });

  it("lets a request in flight finish across a disable while new requests get 407", async () => {
    fixture = await gatewayFixture();
    const { api, user, origin, server } = fixture;
    const agent = new ProxyAgent({
      uri: server.gatewayUrl,
      token: basic(user.username, user.password),
      proxyTunnel: false,
    });
    try {
      const slow = await request(`${origin.url}/slow`, { dispatcher: agent });
      expect(slow.statusCode).toBe(200);
      await api.proxyUsers.disable(user.id);
      expect(await verdict(fixture)).toBe("407 proxy_user_disabled");
      origin.releaseSlow();
      expect(await slow.body.text()).toBe("started;finished");
    } finally {
      await agent.close();
    }
    await expect.poll(() => usageToday(fixture!)).toMatchObject({ requests: 1 });
  });

  it("lets an open tunnel carry on across a disable, and meters it when it closes", async () => {
    fixture = await gatewayFixture();
    const { api, user, origin, server } = fixture;
    const { hostname, port } = new URL(server.gatewayUrl);
    const tunnel = connect({ host: hostname, port: Number(port) });
    let received = Buffer.alloc(0);
    tunnel.on("data", (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise((resolve) => tunnel.once("data", resolve));
    };
    tunnel.write(
      `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\nProxy-Authorization: ${basic(user.username, user.password)}\r\n\r\n`,
    );
    await until(() => received.includes("\r\n\r\n"));
    expect(received.toString("latin1")).toMatch(/^HTTP\/1\.1 200 /);

    await api.proxyUsers.disable(user.id);
    expect(await verdict(fixture)).toBe("407 proxy_user_disabled");
    received = Buffer.alloc(0);
    tunnel.write(`GET /hello HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\n\r\n`);
    await until(() => hasCompleteAnswer(received));
    expect(received.toString("latin1")).toMatch(/^HTTP\/1\.1 200 [\s\S]*hello$/);
    tunnel.end();
    await new Promise((resolve) => tunnel.once("close", resolve));
    await expect.poll(() => usageToday(fixture!)).toMatchObject({ requests: 1 });
    expect((await usageToday(fixture)).bytes).toBe(tunnel.bytesWritten + tunnel.bytesRead);
  });
});
