import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { absoluteRequest, basic, type GatewayFixture, gatewayFixture, usageToday, viaGateway } from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const MB = 1_000_000;
/** How far past a ceiling traffic may go before the gateway cuts it (contract section 7). */
const CUT_MARGIN = 64 * 1024;

/** Sends raw bytes on a new connection and reads until the gateway closes it; resolves with all it read. */
function readUntilClosed(gatewayUrl: string, first: string, onHead?: (write: (data: string) => void) => void) {
  const { hostname, port } = new URL(gatewayUrl);
  return new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    let sawHead = false;
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(first));
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (!sawHead && Buffer.concat(chunks).includes("\r\n\r\n")) {
        sawHead = true;
        onHead?.((data) => socket.write(data));
      }
    });
    socket.on("error", () => {});
    socket.once("close", () => resolve(Buffer.concat(chunks)));
  });
}

describe("gateway ceilings while traffic flows", () => {
  it("cuts a tunnel within 64 KB past the daily ceiling, and refuses the requests that follow", async () => {
    fixture = await gatewayFixture({}, { daily_gb: 0.001 });
    const { origin, user, server } = fixture;
    const auth = basic(user.username, user.password);
    const connectHead = `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\nProxy-Authorization: ${auth}\r\n\r\n`;
    const received = await readUntilClosed(server.gatewayUrl, connectHead, (write) =>
      write(`GET /bytes/5000000 HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\n\r\n`),
    );
    // What was still in the sockets' buffers when the gateway cut is lost, so the client may read a little less.
    expect(received.length).toBeGreaterThan(MB / 2);
    expect(received.length).toBeLessThan(MB + CUT_MARGIN);
    const { bytes } = await usageToday(fixture);
    expect(bytes).toBeGreaterThan(MB);
    expect(bytes).toBeLessThanOrEqual(MB + CUT_MARGIN);
    const after = await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth);
    expect([after.status, after.headers["x-proxy-error"]]).toEqual([407, "traffic_limit_reached"]);
  });

  it("sees a ceiling raised while a tunnel is open before it cuts anything", async () => {
    fixture = await gatewayFixture({}, { daily_gb: 0.001 });
    const { origin, user, server, api } = fixture;
    const auth = basic(user.username, user.password);
    const connectHead = `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\nProxy-Authorization: ${auth}\r\n\r\n`;
    const received = await readUntilClosed(server.gatewayUrl, connectHead, (write) => {
      // Raised once the tunnel is admitted, and well within the second before the meter's next tick.
      void api.proxyUsers
        .update(user.id, { limits: { daily_gb: 0.01 } })
        .then(() =>
          write(`GET /bytes/3000000 HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\nConnection: close\r\n\r\n`),
        );
    });
    expect(received.length).toBeGreaterThan(3 * MB);
  });

  it("cuts a plain download within 64 KB past the monthly ceiling, and cuts the user's other open exchanges with it", async () => {
    fixture = await gatewayFixture({}, { monthly_gb: 0.001 });
    const { origin, user, server } = fixture;
    const auth = basic(user.username, user.password);
    const slow = readUntilClosed(server.gatewayUrl, absoluteRequest("GET", `${origin.url}/slow`, auth));
    await expect.poll(() => usageToday(fixture!), { timeout: 3000 }).toMatchObject({ requests: 1 });
    const big = await readUntilClosed(server.gatewayUrl, absoluteRequest("GET", `${origin.url}/bytes/5000000`, auth));
    expect(big.length).toBeLessThan(MB + CUT_MARGIN);
    // The held answer was cut too: it never got its end.
    expect((await slow).toString("latin1")).not.toContain("finished");
    expect((await usageToday(fixture)).bytes).toBeLessThanOrEqual(MB + CUT_MARGIN);
    const after = await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth);
    expect(after.headers["x-proxy-error"]).toBe("traffic_limit_reached");
  });

  it("cuts an upload that crosses the ceiling", async () => {
    fixture = await gatewayFixture({}, { daily_gb: 0.001 });
    const { origin, user, server } = fixture;
    const auth = basic(user.username, user.password);
    const { hostname, port } = new URL(server.gatewayUrl);
    const socket = connect({ host: hostname, port: Number(port) });
    let sent = 0;
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.on("error", () => {});
    socket.write(absoluteRequest("POST", `${origin.url}/echo`, auth, "Content-Length: 5000000\r\n"));
    while (!socket.destroyed && sent < 5 * MB) {
      const chunk = Buffer.alloc(16 * 1024, 1);
      sent += chunk.length;
      if (!socket.write(chunk)) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await closed;
    expect(sent).toBeLessThan(5 * MB);
    const { bytes } = await usageToday(fixture);
    expect(bytes).toBeGreaterThan(MB);
    expect(bytes).toBeLessThanOrEqual(MB + CUT_MARGIN);
  });

  it("lets an exchange admitted before a disable run to its end (the seed), but closes an idle tunnel", async () => {
    fixture = await gatewayFixture({ gateway: { tunnelIdleTimeoutMs: 300 } });
    const { origin, user, server, api } = fixture;
    const auth = basic(user.username, user.password);
    const slow = readUntilClosed(
      server.gatewayUrl,
      absoluteRequest("GET", `${origin.url}/slow`, auth, "Connection: close\r\n"),
    );
    await expect.poll(() => usageToday(fixture!), { timeout: 3000 }).toMatchObject({ requests: 1 });
    await api.proxyUsers.disable(user.id);
    origin.releaseSlow();
    expect((await slow).toString("latin1")).toContain("finished");

    await api.proxyUsers.update(user.id, { enabled: true });
    const started = Date.now();
    const tunnel = await readUntilClosed(
      server.gatewayUrl,
      `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\nProxy-Authorization: ${auth}\r\n\r\n`,
    );
    expect(tunnel.toString("latin1")).toMatch(/^HTTP\/1\.1 200 /);
    // Closed by the idle timeout, not by the test (which never closes it) nor by the target.
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it("caps a user's open exchanges: past the cap, 429 until one ends", async () => {
    fixture = await gatewayFixture({ gateway: { maxOpenPerUser: 2 } });
    const { origin, user, server } = fixture;
    const auth = basic(user.username, user.password);
    [1, 2].map(() => readUntilClosed(server.gatewayUrl, absoluteRequest("GET", `${origin.url}/slow`, auth)));
    await expect.poll(() => origin.seen.length).toBe(2);
    const third = await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth);
    expect([third.status, third.headers["x-proxy-error"]]).toEqual([429, "rate_limited"]);
    expect(JSON.parse(third.body).error.message).toMatch(/2 requests and tunnels open/);
    origin.releaseSlow();
    await expect.poll(async () => (await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth)).status).toBe(200);
  });
});
