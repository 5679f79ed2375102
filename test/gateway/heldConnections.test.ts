import { readdirSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type GatewayFixture, gatewayFixture } from "./harness";

let fixture: GatewayFixture | undefined;
const held: Socket[] = [];
afterEach(async () => {
  for (const socket of held.splice(0)) socket.destroy();
  await fixture?.close();
  fixture = undefined;
});

/** Descriptors this process holds: the gateway runs in it, beside the test's own client sockets. */
const descriptors = () => readdirSync("/proc/self/fd").length;

/** A client that sends `request` (if any) and then never closes its half, however the gateway answers. */
function holdOpen(gatewayUrl: string, request: string | undefined, localAddress = "127.0.0.1") {
  const { hostname, port } = new URL(gatewayUrl);
  return new Promise<{ socket: Socket; answer: Promise<string>; closed: Promise<void> }>((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress, allowHalfOpen: true }, () => {
      if (request !== undefined) socket.write(request);
      resolve({ socket, answer, closed });
    });
    held.push(socket);
    let received = "";
    const answer = new Promise<string>((done) => {
      socket.on("data", (chunk: Buffer) => {
        received += chunk.toString("latin1");
        if (received.includes("\r\n\r\n")) done(received);
      });
      socket.once("close", () => done(received));
    });
    // The gateway's end of it: its FIN (this side, half-open, stays) or a reset.
    const closed = new Promise<void>((done) => {
      socket.once("end", () => done());
      socket.once("close", () => done());
    });
    socket.on("error", () => {});
    socket.once("error", reject);
  });
}

describe("connections that are refused or never authenticate", () => {
  it("closes 1 000 refused CONNECTs that keep their half open, and the API keeps answering", async () => {
    fixture = await gatewayFixture({ gateway: { headerTimeoutMs: 1000 } });
    const { server, api, origin } = fixture;
    const baseline = descriptors();
    const connectHead = `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\n\r\n`;
    const clients = [];
    for (let i = 0; i < 1000; i++) clients.push(await holdOpen(server.gatewayUrl, connectHead));
    const answers = await Promise.all(clients.map((client) => client.answer));
    // 407 for missing credentials, then 429 once the address has used up its failed-login budget.
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 (407|429) /);
    // The test's own 1 000 sockets stay open; the gateway's side of each is gone within the header timeout.
    await expect.poll(descriptors, { timeout: 1000, interval: 50 }).toBeLessThanOrEqual(baseline + 1000 + 20);
    expect((await api.proxyUsers.list()).items.length).toBeGreaterThan(0);
  });

  it("closes a connection whose headers do not arrive within the header timeout, and caps those one address holds", async () => {
    fixture = await gatewayFixture({ gateway: { headerTimeoutMs: 500, maxUnauthenticatedPerAddress: 5 } });
    const { server, api } = fixture;
    const silent = await Promise.all(Array.from({ length: 5 }, () => holdOpen(server.gatewayUrl, undefined)));
    const partial = await holdOpen(
      server.gatewayUrl,
      "GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\n",
      "127.0.0.2",
    );
    // A sixth from the same address is closed at once; another address is not held to that one's cap.
    const sixth = await holdOpen(server.gatewayUrl, undefined);
    const started = Date.now();
    await sixth.closed;
    expect(Date.now() - started).toBeLessThan(250);
    const elsewhere = await holdOpen(server.gatewayUrl, undefined, "127.0.0.3");
    await Promise.all([...silent, partial, elsewhere].map((client) => client.closed));
    expect(Date.now() - started).toBeLessThan(500 + 250 + 250);
    expect((await api.proxyUsers.list()).items.length).toBeGreaterThan(0);
  });
});
