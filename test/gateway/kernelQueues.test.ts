import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { type AddressInfo, connect, createServer, type Server, Socket } from "node:net";
import { threadId } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { KernelQueueReader, queueKey, readKernelQueues } from "../../server/gateway/kernelQueues";

const opened: (Server | Socket)[] = [];
afterEach(() => {
  for (const thing of opened.splice(0)) thing instanceof Socket ? thing.destroy() : thing.close();
});

function listen(host: string, port: number, accepted: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    // Closing a client that left data unread resets the connection.
    socket.on("error", () => {});
    opened.push(socket);
    accepted(socket);
  });
  opened.push(server);
  return new Promise((resolve) =>
    server.listen({ host, port, ipv6Only: host.includes(":") }, () => resolve((server.address() as AddressInfo).port)),
  );
}

function dial(options: { host: string; port: number; localAddress?: string; localPort?: number }): Promise<Socket> {
  const socket = connect(options);
  opened.push(socket);
  return new Promise((resolve, reject) => {
    socket.once("connect", () => {
      socket.on("error", () => {});
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

const keyOf = (socket: Socket) =>
  queueKey(socket.localAddress, socket.localPort, socket.remoteAddress, socket.remotePort) as string;

/** Every read of /proc/net/tcp* this thread makes while `run` runs (fs, sync and async). */
async function procReadsDuring(run: () => unknown): Promise<string[]> {
  const reads: string[] = [];
  const original = { sync: fs.readFileSync, callback: fs.readFile, promise: fs.promises.readFile };
  const note = (file: unknown) => {
    if (String(file).startsWith("/proc/net/tcp")) reads.push(String(file));
  };
  fs.readFileSync = ((file: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
    note(file);
    return (original.sync as (...args: unknown[]) => unknown)(file, ...rest);
  }) as typeof fs.readFileSync;
  fs.readFile = ((file: unknown, ...rest: unknown[]) => {
    note(file);
    return (original.callback as (...args: unknown[]) => unknown)(file, ...rest);
  }) as typeof fs.readFile;
  fs.promises.readFile = ((file: unknown, ...rest: unknown[]) => {
    note(file);
    return (original.promise as (...args: unknown[]) => unknown)(file, ...rest);
  }) as typeof fs.promises.readFile;
  syncBuiltinESMExports();
  try {
    await run();
  } finally {
    fs.readFileSync = original.sync;
    fs.readFile = original.callback;
    fs.promises.readFile = original.promise;
    syncBuiltinESMExports();
  }
  return reads;
}

describe("the kernel's queues", () => {
  it("tell apart two connections with the same port numbers on different addresses (IPv4 and IPv6)", async () => {
    const accepted: Socket[] = [];
    const port = await listen("127.0.0.1", 0, (socket) => accepted.push(socket));
    await listen("::1", port, (socket) => accepted.push(socket));
    const overV4 = await dial({ host: "127.0.0.1", port });
    const overV6 = await dial({ host: "::1", port, localAddress: "::1", localPort: overV4.localPort as number });
    expect(overV6.localPort).toBe(overV4.localPort);
    await expect.poll(() => accepted.length).toBe(2);
    // The server writes 8 MB to the IPv4 client, which never reads: the kernel holds much of it unsent.
    const [toV4, toV6] = [...accepted].sort((a, b) =>
      a.remoteFamily === "IPv4" ? -1 : b.remoteFamily === "IPv4" ? 1 : 0,
    );
    toV4?.write(Buffer.alloc(8_000_000));
    overV4.pause();
    const keys = [toV4, toV6].map((socket) => keyOf(socket as Socket));
    expect(new Set(keys).size).toBe(2);
    await expect.poll(() => readKernelQueues([port], keys).get(keys[0] as string)?.tx ?? 0).toBeGreaterThan(0);
    const queues = readKernelQueues([port], keys);
    expect(queues.get(keys[1] as string)).toEqual({ tx: 0, rx: 0 });
    const reader = new KernelQueueReader();
    try {
      const read = await reader.read([port], keys);
      expect(read.queues.get(keys[0] as string)?.tx).toBeGreaterThan(0);
      expect(read.queues.get(keys[1] as string)).toEqual({ tx: 0, rx: 0 });
    } finally {
      reader.close();
    }
  });

  it("are read by the reader in its own thread: the calling thread never reads the tables", async () => {
    const port = await listen("127.0.0.1", 0, () => {});
    const client = await dial({ host: "127.0.0.1", port });
    const key = keyOf(client);
    // The spy sees this thread's reads: a read here is two of them.
    expect(await procReadsDuring(() => readKernelQueues([client.localPort as number]))).toHaveLength(2);
    const reader = new KernelQueueReader();
    try {
      let read: Awaited<ReturnType<KernelQueueReader["read"]>> | undefined;
      const reads = await procReadsDuring(async () => {
        read = await reader.read([client.localPort as number], [key]);
      });
      expect(reads).toEqual([]);
      expect(read?.threadId).not.toBe(threadId);
      expect(read?.queues.get(key)).toEqual({ tx: 0, rx: 0 });
    } finally {
      reader.close();
    }
  });
});
