import { connect, type Socket } from "node:net";
import { request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SCOPES } from "../../contract/keys";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { STREAM_QUEUE_BYTES } from "../../server/console/streams";

interface ServerEvent {
  event: string;
  data: string;
}

/** A console event stream over a raw socket, as any local process could open one. */
interface RawStream {
  socket: Socket;
  /** Every event received so far (none for a stream that stopped reading). */
  events: ServerEvent[];
  closed: boolean;
}

function openStream(server: ReferenceServer, cookie: string, reads: boolean): Promise<RawStream> {
  const { hostname, port } = new URL(server.url);
  const socket = connect({ host: hostname, port: Number(port) });
  const stream: RawStream = { socket, events: [], closed: false };
  socket.on("close", () => {
    stream.closed = true;
  });
  socket.on("error", () => undefined);
  socket.write(`GET /console/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\nCookie: ${cookie}\r\n\r\n`);
  let pending = "";
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.once("data", (first: Buffer) => {
      if (!first.toString("latin1").startsWith("HTTP/1.1 200")) reject(new Error(first.toString("latin1")));
      // A reader that stops: it took the status line and reads nothing more, ever.
      if (!reads) socket.pause();
      resolve(stream);
    });
    if (!reads) return;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      // Chunked encoding: the size lines fall between events, where a blank line already split them.
      pending += chunk;
      const blocks = pending.split("\n\n");
      pending = blocks.pop() ?? "";
      for (const block of blocks) {
        const event = /^event: (\w+)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event !== undefined && data !== undefined) stream.events.push({ event, data });
      }
    });
  });
}

const named = (stream: RawStream, event: string) => stream.events.filter((e) => e.event === event);

describe("the console's event streams under slow and many readers", () => {
  let server: ReferenceServer;
  let api: ProxyClient;
  let cookie: string;
  const opened: RawStream[] = [];
  const open = async (reads: boolean) => {
    const stream = await openStream(server, cookie, reads);
    opened.push(stream);
    return stream;
  };

  // A server each: the flood below leaves twenty thousand keys that every later opening would list.
  beforeEach(async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 1_000_000 });
    api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, maxRetries: 0 });
    const page = await request(`${server.url}/`);
    await page.body.text();
    cookie = String(page.headers["set-cookie"]).split(";")[0] ?? "";
  });
  afterEach(async () => {
    for (const stream of opened.splice(0)) stream.socket.destroy();
    await expect.poll(() => server.consoleStats()?.streams, { timeout: 10_000 }).toBe(0);
    await server.close();
  });

  it("closes a stream that stopped reading once it holds its allowance, and the reading one gets every change", async () => {
    const stalled = await open(false);
    const reader = await open(true);
    await expect.poll(() => named(reader, "state").length, { timeout: 10_000 }).toBeGreaterThan(0);
    const opening = server.consoleStats()?.queuedBytes ?? [];
    expect(opening).toHaveLength(2);

    // About 7 MB of changes: more than the kernel's socket buffers take (about 4 MB on loopback) plus
    // the allowance. Today's server resent the whole list every second to a reader that never read.
    let created = 0;
    let mostQueued = 0;
    for (let batch = 0; batch < 40 && !stalled.closed; batch++) {
      for (let i = 0; i < 500; i++, created++)
        server.control.createKey({ name: `flood-${created}-${"x".repeat(40)}`, scopes: [...SCOPES] });
      mostQueued = Math.max(mostQueued, ...(server.consoleStats()?.queuedBytes ?? []));
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    await expect.poll(() => server.consoleStats()?.dropped, { timeout: 20_000 }).toBe(1);
    expect(server.consoleStats()?.streams).toBe(1);
    // Never more than what it opened with (a few kilobytes here) and the allowance.
    expect(mostQueued).toBeLessThanOrEqual(STREAM_QUEUE_BYTES + 64 * 1024);

    // The reader was not slowed into a drop, and holds every key created, from changes alone.
    const last = await api.proxyUsers.create({ name: "after-the-flood" });
    await expect.poll(() => reader.events.some((e) => e.data.includes(last.id)), { timeout: 10_000 }).toBe(true);
    const keys = new Set<string>();
    for (const { data } of named(reader, "changes"))
      for (const key of (JSON.parse(data) as { keys?: { put: { id: string }[] } }).keys?.put ?? []) keys.add(key.id);
    expect(keys.size).toBe(created);
    expect(reader.closed).toBe(false);
  }, 90_000);

  it("builds a frame once for every stream and the full list once for pages opening together", async () => {
    for (let i = 0; i < 20; i++) await api.proxyUsers.create({ name: `listed-${i}` });
    const before = server.consoleStats();
    const readers = await Promise.all(Array.from({ length: 40 }, () => open(true)));
    await expect.poll(() => readers.every((r) => named(r, "objects").length === 1), { timeout: 10_000 }).toBe(true);
    const afterOpening = server.consoleStats();
    expect((afterOpening?.listsBuilt ?? 0) - (before?.listsBuilt ?? 0)).toBe(1);

    const users = await Promise.all([0, 1, 2].map((i) => api.proxyUsers.create({ name: `changed-${i}` })));
    const seenByAll = () => readers.every((r) => users.every((user) => r.events.some((e) => e.data.includes(user.id))));
    await expect.poll(seenByAll, { timeout: 10_000 }).toBe(true);
    // One frame per tick for all 40 streams: a frame per stream would be 40 at least.
    const frames = (server.consoleStats()?.framesBuilt ?? 0) - (afterOpening?.framesBuilt ?? 0);
    expect(frames).toBeLessThan(readers.length);
  }, 60_000);

  it("sends what changed, not the whole list again", async () => {
    const reader = await open(true);
    await expect.poll(() => named(reader, "objects").length, { timeout: 10_000 }).toBe(1);
    type UserChanges = { put: { id: string; enabled: boolean }[]; gone: string[] };
    const changes = () =>
      named(reader, "changes").flatMap((e) => (JSON.parse(e.data) as { proxyUsers?: UserChanges }).proxyUsers ?? []);
    const user = await api.proxyUsers.create({ name: "watched" });
    await expect.poll(() => changes().some((c) => c.put.some((put) => put.enabled)), { timeout: 10_000 }).toBe(true);
    await api.proxyUsers.update(user.id, { enabled: false });
    await expect.poll(() => changes().some((c) => c.put.some((put) => !put.enabled)), { timeout: 10_000 }).toBe(true);
    await api.proxyUsers.delete(user.id);
    await expect.poll(() => changes().some((c) => c.gone.includes(user.id)), { timeout: 10_000 }).toBe(true);
    // Only the user that changed, and the list itself once, when the stream opened.
    expect(changes().flatMap((c) => [...c.put.map((put) => put.id), ...c.gone])).toEqual([user.id, user.id, user.id]);
    expect(named(reader, "objects")).toHaveLength(1);
  }, 30_000);

  it("writes hidden characters in names out, so a look-alike key cannot pass for root", async () => {
    const reader = await open(true);
    await api.keys.create({ name: "ro\u200Bot", scopes: ["usage:read"] });
    await api.keys.create({ name: "admin\u202Egnp.exe", scopes: ["usage:read"] });
    const names = () =>
      named(reader, "changes").flatMap((e) =>
        ((JSON.parse(e.data) as { keys?: { put: { name: string }[] } }).keys?.put ?? []).map((key) => key.name),
      );
    await expect.poll(() => names().length, { timeout: 10_000 }).toBe(2);
    expect(names()).toEqual(["ro\\u200Bot", "admin\\u202Egnp.exe"]);
    for (const { data } of reader.events) expect(data).not.toMatch(/[\u200B\u202E]/);
  }, 30_000);
});
