import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { queueKey, readKernelQueues } from "../../server/gateway/kernelQueues";
import { basic, type GatewayFixture, gatewayFixture, usageToday } from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

/** What the contract allows between what is billed and what crossed the wire, per connection (section 7). */
const MARGIN = 64 * 1024;
const MB = 1_000_000;

/** One raw client connection: what it wrote, what it read, and the x-request-id of the gateway's first answer. */
interface Client {
  socket: Socket;
  written: number;
  read: number;
  requestId: () => string | undefined;
  closed: Promise<void>;
}

function openClient(gatewayUrl: string, first: string): Promise<Client> {
  const { hostname, port } = new URL(gatewayUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(port) });
    let head = "";
    const client: Client = {
      socket,
      written: 0,
      read: 0,
      requestId: () => /\r\nx-request-id: (\S+)/i.exec(head)?.[1],
      closed: new Promise((done) => socket.once("close", () => done())),
    };
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      client.read += chunk.length;
      if (head.length < 4096) head += chunk.toString("latin1", 0, Math.min(chunk.length, 4096));
    });
    socket.once("connect", () => {
      write(client, first);
      resolve(client);
    });
  });
}

function write(client: Client, data: string): void {
  client.written += Buffer.byteLength(data, "latin1");
  client.socket.write(data);
}

/** Bytes the gateway's log line says each request id was billed. */
function billedById(logLines: string[]): Map<string, number> {
  const billed = new Map<string, number>();
  for (const line of logLines) {
    const match = /^(\S+) gateway .* (\d+)B /.exec(line);
    if (match) billed.set(match[1] as string, Number(match[2]));
  }
  return billed;
}

function connectHead(port: number, auth: string): string {
  return `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nProxy-Authorization: ${auth}\r\n\r\n`;
}

const PATIENT = { timeout: 60_000 };

describe("billed is what was delivered", () => {
  it("cuts 20 tunnels at a 1 MB ceiling without billing what was written to sockets already closed", async () => {
    fixture = await gatewayFixture({}, { daily_gb: 0.001 });
    const { origin, user, server, logLines } = fixture;
    const auth = basic(user.username, user.password);
    const clients = await Promise.all(
      Array.from({ length: 20 }, () => openClient(server.gatewayUrl, connectHead(origin.port, auth))),
    );
    // Polls wait as long as a busy machine needs (the suite's load reaches 15 on 2 cores); each ends at once when it holds.
    await expect.poll(() => clients.every((client) => client.read > 0), PATIENT).toBe(true);
    for (const client of clients)
      write(client, `GET /bytes/200000 HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\nConnection: close\r\n\r\n`);
    await Promise.all(clients.map((client) => client.closed));
    await expect.poll(() => logLines.filter((line) => line.includes(" gateway CONNECT ")).length, PATIENT).toBe(20);

    const { bytes } = await usageToday(fixture);
    expect(bytes).toBeLessThanOrEqual(MB + MARGIN);
    const billed = billedById(logLines);
    for (const client of clients) {
      const delivered = client.written + client.read;
      expect(billed.get(client.requestId() ?? "?"), "a tunnel with a log line").toBeDefined();
      expect((billed.get(client.requestId() ?? "?") ?? 0) - delivered).toBeLessThanOrEqual(MARGIN);
    }
  });

  /**
   * A client that reads half a megabyte of 20 MB, stops reading for 1.5 s, then resets. Delivered is
   * what it wrote, what it read, and what sat unread in its receive buffers (the kernel's count, its socket's).
   */
  async function slowReaderThatResets(fixture: GatewayFixture, tunnelled: boolean): Promise<number> {
    const { origin, user, server, logLines } = fixture;
    const auth = basic(user.username, user.password);
    const get = (target: string, credentials?: string) =>
      `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\n${credentials ? `Proxy-Authorization: ${credentials}\r\n` : ""}\r\n`;
    const client = await openClient(
      server.gatewayUrl,
      tunnelled ? connectHead(origin.port, auth) : get(`${origin.url}/bytes/20000000`, auth),
    );
    if (tunnelled) {
      await expect.poll(() => client.read, PATIENT).toBeGreaterThan(0);
      write(client, get("/bytes/20000000"));
    }
    await expect.poll(() => client.read, { ...PATIENT, interval: 5 }).toBeGreaterThan(500_000);
    client.socket.pause();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Measured within the 1.5 s on an idle machine; on a busy one the watch's look comes later, and a
    // reset before it is billed what the gateway handed to the kernel: the claim is the bill after it.
    await expect.poll(() => server.gateway.measuredStalls(), PATIENT).toBe(1);
    const { localAddress, localPort, remoteAddress, remotePort } = client.socket;
    const ownRow = queueKey(localAddress, localPort, remoteAddress, remotePort) ?? "";
    const inKernel = readKernelQueues([localPort ?? 0]).get(ownRow)?.rx;
    expect(inKernel, "the kernel's report of the client's connection").toBeDefined();
    // Read from the kernel by this process's socket, not yet handed to the test: received all the same.
    const unread = (inKernel ?? 0) + client.socket.readableLength;
    client.socket.resetAndDestroy();
    await expect.poll(() => logLines.filter((line) => line.includes(" gateway ")).length, PATIENT).toBe(1);
    const delivered = client.written + client.read + unread;
    const [line] = logLines.filter((text) => text.includes(" gateway "));
    const billed = Number(/ (\d+)B /.exec(line ?? "")?.[1]);
    expect((await usageToday(fixture)).bytes).toBe(billed);
    return billed - delivered;
  }

  for (const host of ["127.0.0.1", "::1"]) {
    for (const tunnelled of [false, true]) {
      it(`bills a slow reader that resets exactly what it received, not what sat in the gateway's buffers: ${host}, ${tunnelled ? "tunnelled" : "plain"}`, async () => {
        fixture = await gatewayFixture({ host });
        expect(await slowReaderThatResets(fixture, tunnelled)).toBe(0);
      });
    }
  }
});
