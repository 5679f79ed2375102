import type { Socket } from "node:net";
import { KernelQueueReader, queueKey } from "./kernelQueues";

/** A connection the gateway writes to, as the stall watch sees it. */
export interface Watched {
  readonly socket: Socket;
  /** Bytes billed but still in this process or the kernel when last looked at; undefined once anything moved. */
  unsent: number | undefined;
  /** Counts writes and drains, so a look that raced one is not kept. */
  readonly moves: number;
}

type NodeSocket = Socket & { _handle?: { writeQueueSize?: number } | null; _writableState?: { writelen?: number } };

/** Bytes the kernel has not taken yet from this process: Node's buffer and libuv's queue. */
function pendingHere(socket: NodeSocket): number {
  const inFlight = socket._writableState?.writelen ?? 0;
  return Math.max(0, socket.writableLength - inFlight) + (socket._handle?.writeQueueSize ?? 0);
}

/** The kernel did not take all of the last write: the client is not reading as fast as the gateway writes. */
export function isStalled(socket: Socket): boolean {
  return ((socket as NodeSocket)._handle?.writeQueueSize ?? 0) > 0;
}

/**
 * Finds out what a stalled connection's client has not received. A client that stops reading fills
 * its receive window, then the gateway's send buffer (megabytes, which Node cannot shrink), then
 * this process's queue. While that lasts, every `everyMs` the watch reads the kernel's own count of
 * unacknowledged bytes for each stalled connection (one read for all of them, in a worker thread,
 * never two at once) and adds what this process still holds; the connection keeps that as `unsent` until anything moves (a write, a drain), and a connection that
 * then resets is billed that much less (see ConnectionMeter).
 */
export class StallWatch {
  /** Connections whose last write was not taken at once, with how many looks in a row found them stalled. */
  private readonly suspects = new Map<Watched, number>();
  private timer: NodeJS.Timeout | undefined;
  private looking = false;
  private stopped = false;

  constructor(
    private readonly everyMs = 100,
    /** Its own worker thread: the tables are read and parsed there, never in the gateway's. */
    readonly reader = new KernelQueueReader(),
  ) {}

  suspect(connection: Watched): void {
    if (!this.suspects.has(connection)) this.suspects.set(connection, 0);
    // The reader's thread starts while the watch makes sure of the stall, not when it first measures.
    this.reader.warm();
    // While a look is under way its own end schedules the next: reads never overlap or queue up.
    if (!this.looking && !this.stopped) this.timer ??= setTimeout(() => void this.look(), this.everyMs).unref();
  }

  /** How many stalled connections hold a measurement now: a test waits for it before it cuts a client. */
  measured(): number {
    let count = 0;
    for (const connection of this.suspects.keys()) if (connection.unsent !== undefined) count++;
    return count;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.suspects.clear();
    this.reader.close();
  }

  private async look(): Promise<void> {
    this.timer = undefined;
    // Stalled at two checks in a row: a client that stopped reading, not one a moment behind.
    const stalled: Watched[] = [];
    for (const [connection, checks] of this.suspects) {
      if (connection.socket.destroyed || !isStalled(connection.socket)) this.suspects.delete(connection);
      else if (checks >= 1) stalled.push(connection);
      else this.suspects.set(connection, checks + 1);
    }
    if (stalled.length > 0) {
      this.looking = true;
      await this.measure(stalled).finally(() => {
        this.looking = false;
      });
    }
    if (this.suspects.size > 0 && !this.stopped)
      this.timer ??= setTimeout(() => void this.look(), this.everyMs).unref();
  }

  /** One read of the kernel's tables for all of them, in the reader's thread; the next look waits for it. */
  private async measure(stalled: Watched[]): Promise<void> {
    const keys = stalled.map(({ socket }) =>
      queueKey(socket.localAddress, socket.localPort, socket.remoteAddress, socket.remotePort),
    );
    const movesBefore = stalled.map((connection) => connection.moves);
    const localPorts = [...new Set(stalled.map(({ socket }) => socket.localPort ?? 0))];
    const wanted = keys.filter((key) => key !== undefined);
    const { queues } = await this.reader.read(localPorts, wanted);
    for (const [index, connection] of stalled.entries()) {
      const { socket } = connection;
      if (socket.destroyed || !isStalled(socket) || movesBefore[index] !== connection.moves) continue;
      const kernel = queues.get(keys[index] ?? "")?.tx;
      if (kernel !== undefined) connection.unsent = kernel + pendingHere(socket as NodeSocket);
    }
  }
}
