import { createServer } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ChunkReader, chunkSources } from "../../server/gateway/chunks";
import { RequestFraming } from "../../server/gateway/framing";
import {
  absoluteRequest,
  basic,
  type GatewayFixture,
  gatewayFixture,
  pipelined,
  statusOf,
  usageToday,
} from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const bytesOf = (...parts: (Buffer | string)[]) =>
  parts.reduce((sum, part) => sum + (typeof part === "string" ? Buffer.byteLength(part, "latin1") : part.length), 0);

/** The bytes each gateway log line says its exchange was billed, in order. */
function billedPerExchange(logLines: string[]): number[] {
  return logLines.filter((line) => line.includes(" gateway ")).map((line) => Number(/ (\d+)B /.exec(line)?.[1]));
}

/** A raw connection to the gateway that records everything it reads. */
async function openRaw(gatewayUrl: string): Promise<{ socket: Socket; received: () => Buffer; written: number[] }> {
  const { hostname, port } = new URL(gatewayUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  await new Promise((resolve) => socket.once("connect", resolve));
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  const written: number[] = [];
  const write = socket.write.bind(socket);
  socket.write = ((data: string | Buffer) => {
    written.push(bytesOf(data));
    return write(data);
  }) as Socket["write"];
  return { socket, received: () => Buffer.concat(chunks), written };
}

describe("the chunks Node's HTTP parser reads", () => {
  it("reach the framing through the parser's own hook on this Node, each byte after its request is emitted", async () => {
    const counted = new Map<number, number>();
    let early = 0;
    let emitted = 0;
    let source: string | undefined;
    const server = createServer((req, res) => {
      emitted++;
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    server.on("connection", (socket: Socket) => {
      const framing = new RequestFraming((index, bytes) => {
        if (index >= emitted) early += bytes;
        counted.set(index, (counted.get(index) ?? 0) + bytes);
      });
      source = new ChunkReader(socket, framing).source;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    // A body much longer than one read, so most of its chunks are counted without being copied.
    const upload = `POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n${"u".repeat(300_000)}`;
    const after = "GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1", () => socket.end(upload + after));
    socket.resume();
    await new Promise((resolve) => socket.once("close", resolve));
    server.close();
    expect(source).toBe("parser");
    expect([...counted]).toEqual([
      [0, Buffer.byteLength(upload)],
      [1, Buffer.byteLength(after)],
    ]);
    expect(early).toBe(0);
  });
});

describe.each(["parser", "listener"] as const)(
  "gateway metering, exchange by exchange, bytes read by the %s",
  (source) => {
    beforeEach(() => {
      chunkSources.preferred = source;
    });
    afterEach(() => {
      chunkSources.preferred = "parser";
    });

    it("bills a valid exchange its exact bytes when a refused one is pipelined behind it, and closes after the refusal", async () => {
      fixture = await gatewayFixture();
      const { origin, user, server } = fixture;
      const valid = absoluteRequest("GET", `${origin.url}/bytes/2000`, basic(user.username, user.password));
      const refused = absoluteRequest("GET", `${origin.url}/hello`, basic(user.username, "wrong"));
      const trailing = absoluteRequest("GET", `${origin.url}/hello`, basic(user.username, user.password));
      const answers = await pipelined(
        server.gatewayUrl,
        [valid, refused, trailing].map((r) => Buffer.from(r)),
      );
      // The request behind the refusal is not served: the connection closed after the 407.
      expect(answers.map(statusOf)).toEqual([200, 407]);
      expect(await usageToday(fixture)).toEqual({ bytes: bytesOf(valid, answers[0]!), requests: 1 });
    });

    it("serves one proxy user per connection: a second one pipelined behind the first is refused, and each is billed only its own", async () => {
      fixture = await gatewayFixture();
      const { origin, user, server, api } = fixture;
      const other = await api.proxyUsers.create({ name: "other" });
      const first = absoluteRequest("GET", `${origin.url}/bytes/2000`, basic(user.username, user.password));
      const second = absoluteRequest("GET", `${origin.url}/hello`, basic(other.username, other.password));
      const answers = await pipelined(server.gatewayUrl, [Buffer.from(first), Buffer.from(second)]);
      expect(answers.map(statusOf)).toEqual([200, 400]);
      expect(answers[1]!.toString("latin1")).toMatch(/another proxy user's traffic/);
      expect(await usageToday(fixture)).toEqual({ bytes: bytesOf(first, answers[0]!), requests: 1 });
      expect(await usageToday(fixture, other.id)).toEqual({ bytes: 0, requests: 0 });
    });

    it("bills a chunked upload its framing, extensions and trailers, and the request pipelined behind it its own bytes", async () => {
      fixture = await gatewayFixture();
      const { origin, user, server, logLines } = fixture;
      const auth = basic(user.username, user.password);
      const upload =
        absoluteRequest("POST", `${origin.url}/echo`, auth, "Transfer-Encoding: chunked\r\n") +
        `5\r\nhello\r\n1a;ext=1\r\n${"u".repeat(26)}\r\n${"4000\r\n"}${"z".repeat(0x4000)}\r\n0\r\nX-Trailer: t\r\n\r\n`;
      const after = absoluteRequest("GET", `${origin.url}/hello`, auth, "Connection: close\r\n");
      const answers = await pipelined(server.gatewayUrl, [Buffer.from(upload, "latin1"), Buffer.from(after)]);
      expect(answers.map(statusOf)).toEqual([200, 200]);
      expect(answers[0]!.length).toBeGreaterThan(0x4000);
      await expect.poll(() => billedPerExchange(logLines)).toHaveLength(2);
      expect(billedPerExchange(logLines)).toEqual([bytesOf(upload, answers[0]!), bytesOf(after, answers[1]!)]);
      expect(await usageToday(fixture)).toEqual({ bytes: bytesOf(upload, after, ...answers), requests: 2 });
    });

    it("bills an aborted download what the gateway sent before the client left, and the next exchange exactly its own", async () => {
      fixture = await gatewayFixture();
      const { origin, user, server, logLines } = fixture;
      const auth = basic(user.username, user.password);
      const raw = await openRaw(server.gatewayUrl);
      const big = absoluteRequest("GET", `${origin.url}/bytes/5000000`, auth);
      raw.socket.write(big);
      await expect.poll(() => raw.received().length).toBeGreaterThan(200_000);
      raw.socket.destroy();
      const read = raw.received().length;
      await expect.poll(() => billedPerExchange(logLines)).toHaveLength(1);
      const [aborted] = billedPerExchange(logLines);
      expect(aborted).toBeGreaterThanOrEqual(bytesOf(big) + read);
      expect(aborted).toBeLessThan(bytesOf(big) + 5_000_300);

      const hello = absoluteRequest("GET", `${origin.url}/hello`, auth, "Connection: close\r\n");
      const [answer] = await pipelined(server.gatewayUrl, [Buffer.from(hello)]);
      await expect.poll(() => billedPerExchange(logLines)).toHaveLength(2);
      expect(billedPerExchange(logLines)[1]).toBe(bytesOf(hello, answer!));
      expect(await usageToday(fixture)).toEqual({ bytes: (aborted ?? 0) + bytesOf(hello, answer!), requests: 2 });
    });

    it("shows an open tunnel's traffic in GET /v1/usage within about a second, while it stays open", async () => {
      fixture = await gatewayFixture();
      const { origin, user, server } = fixture;
      const raw = await openRaw(server.gatewayUrl);
      const connectHead = `CONNECT 127.0.0.1:${origin.port} HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\nProxy-Authorization: ${basic(user.username, user.password)}\r\n\r\n`;
      raw.socket.write(connectHead);
      await expect.poll(() => raw.received().includes("\r\n\r\n")).toBe(true);
      raw.socket.write(`GET /bytes/3000 HTTP/1.1\r\nHost: 127.0.0.1:${origin.port}\r\n\r\n`);
      await expect.poll(() => raw.received().length).toBeGreaterThan(3000);
      const carried = () => raw.written.reduce((sum, n) => sum + n, 0) + raw.received().length;
      await expect.poll(() => usageToday(fixture!), { timeout: 3000 }).toEqual({ bytes: carried(), requests: 1 });
      expect(raw.socket.destroyed).toBe(false);
      raw.socket.destroy();
    });

    it("shows a long answer's bytes in GET /v1/usage while it is still being sent", async () => {
      fixture = await gatewayFixture();
      const { origin, user, server } = fixture;
      const raw = await openRaw(server.gatewayUrl);
      const slow = absoluteRequest("GET", `${origin.url}/slow`, basic(user.username, user.password));
      raw.socket.write(slow);
      await expect.poll(() => raw.received().includes("started;")).toBe(true);
      await expect
        .poll(() => usageToday(fixture!), { timeout: 3000 })
        .toEqual({ bytes: bytesOf(slow, raw.received()), requests: 1 });
      origin.releaseSlow();
      raw.socket.destroy();
    });
  },
);
