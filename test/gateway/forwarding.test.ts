import { ProxyAgent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { deadPort } from "../support/ports";
import {
  basic,
  type GatewayFixture,
  gatewayFixture,
  hasCompleteAnswer,
  rawSession,
  statusOf,
  viaGateway,
} from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function rawConnect(gatewayUrl: string, authority: string, auth: string): Promise<Buffer> {
  const head = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\nProxy-Authorization: ${auth}\r\n\r\n`;
  const session = await rawSession(gatewayUrl, [Buffer.from(head, "latin1")], hasCompleteAnswer);
  return session.answers[0]!;
}

describe("gateway forwarding", () => {
  it("forwards absolute-form requests with undici's ProxyAgent, without the proxy's own headers", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const agent = new ProxyAgent({
      uri: server.gatewayUrl,
      token: basic(user.username, user.password),
      proxyTunnel: false,
    });
    try {
      const hello = await request(`${origin.url}/hello`, { dispatcher: agent });
      expect(hello.statusCode).toBe(200);
      expect(await hello.body.text()).toBe("hello");
      const echoed = await request(`${origin.url}/echo`, { method: "POST", body: "round trip", dispatcher: agent });
      expect(await echoed.body.text()).toBe("round trip");
    } finally {
      await agent.close();
    }
    expect(origin.seen.map((seen) => `${seen.method} ${seen.url} ${seen.body}`)).toEqual([
      "GET /hello ",
      "POST /echo round trip",
    ]);
    for (const seen of origin.seen) {
      expect(seen.headers).not.toHaveProperty("proxy-authorization");
      expect(seen.headers).not.toHaveProperty("proxy-connection");
      expect(seen.headers.host).toBe(`127.0.0.1:${origin.port}`);
    }
  });

  it("carries CONNECT tunnels, with ProxyAgent's default tunnelling and to `localhost` by name", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const agent = new ProxyAgent({ uri: server.gatewayUrl, token: basic(user.username, user.password) });
    try {
      const byAddress = await request(`${origin.url}/hello`, { dispatcher: agent });
      expect(await byAddress.body.text()).toBe("hello");
      const byName = await request(`http://localhost:${origin.port}/echo`, {
        method: "POST",
        body: "tunnelled",
        dispatcher: agent,
      });
      expect(await byName.body.text()).toBe("tunnelled");
    } finally {
      await agent.close();
    }
    expect(origin.seen.every((seen) => seen.headers["proxy-authorization"] === undefined)).toBe(true);
  });

  it("refuses targets outside loopback with 403 target_not_allowed, over HTTP and CONNECT", async () => {
    fixture = await gatewayFixture();
    const { user, server } = fixture;
    const auth = basic(user.username, user.password);
    for (const target of ["http://192.0.2.10/", "http://198.51.100.7:8080/x", "http://origin.invalid/"]) {
      const answer = await viaGateway(server.gatewayUrl, target, auth);
      expect(answer.status, target).toBe(403);
      expect(answer.headers["x-proxy-error"]).toBe("target_not_allowed");
    }
    const tunnel = await rawConnect(server.gatewayUrl, "192.0.2.10:443", auth);
    expect(statusOf(tunnel)).toBe(403);
    expect(tunnel.toString("latin1")).toMatch(/\r\nx-proxy-error: target_not_allowed\r\n/);
  });

  it("forwards to a host the operator allowed by name", async () => {
    fixture = await gatewayFixture({ gateway: { allowedHosts: ["origin.invalid"] } });
    const { user, server } = fixture;
    // Allowed, so the gateway tries it; the name resolves nowhere, so the attempt fails as unreachable.
    const answer = await viaGateway(server.gatewayUrl, "http://origin.invalid/", basic(user.username, user.password));
    expect(answer.status).toBe(502);
    expect(answer.headers["x-proxy-error"]).toBe("target_unreachable");
  });

  it("answers 502 target_unreachable when the target is down, over HTTP and CONNECT", async () => {
    fixture = await gatewayFixture();
    const { user, server } = fixture;
    const auth = basic(user.username, user.password);
    const port = await deadPort();
    const answer = await viaGateway(server.gatewayUrl, `http://127.0.0.1:${port}/`, auth);
    expect(answer.status).toBe(502);
    expect(answer.headers["x-proxy-error"]).toBe("target_unreachable");
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "target_unreachable" } });
    const tunnel = await rawConnect(server.gatewayUrl, `127.0.0.1:${port}`, auth);
    expect(statusOf(tunnel)).toBe(502);
    expect(tunnel.toString("latin1")).toMatch(/\r\nx-proxy-error: target_unreachable\r\n/);
  });

  it("answers 400 to a request that is not a proxy request", async () => {
    fixture = await gatewayFixture();
    const { user, server } = fixture;
    const answer = await viaGateway(server.gatewayUrl, "/v1/usage", basic(user.username, user.password));
    expect(answer.status).toBe(400);
    expect(answer.headers["x-proxy-error"]).toBe("bad_request");
  });
});
