import { readFile } from "node:fs/promises";
import type { Socket } from "node:net";

/** What the kernel holds for one TCP connection: bytes not yet acknowledged by the peer, bytes not yet read. */
export interface KernelQueues {
  tx: number;
  rx: number;
}

/** `<local port> <remote port>`: the key of a connection in {@link readKernelQueues}. */
export function queueKey(localPort: number | undefined, remotePort: number | undefined): string {
  return `${localPort} ${remotePort}`;
}

/**
 * Every TCP connection's queues as Linux reports them (/proc/net/tcp and tcp6), by local and remote
 * port; empty where there is no such report. Reading it walks every socket of the machine (some
 * milliseconds), so the gateway does it only for connections that have stalled.
 */
export async function readKernelQueues(): Promise<Map<string, KernelQueues>> {
  const queues = new Map<string, KernelQueues>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await readFile(file, "latin1").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue ...
      const fields = line.trim().split(/\s+/);
      const local = fields[1]?.split(":")[1];
      const remote = fields[2]?.split(":")[1];
      const [tx, rx] = (fields[4] ?? "").split(":");
      if (local === undefined || remote === undefined || tx === undefined || rx === undefined) continue;
      const key = queueKey(Number.parseInt(local, 16), Number.parseInt(remote, 16));
      queues.set(key, { tx: Number.parseInt(tx, 16), rx: Number.parseInt(rx, 16) });
    }
  }
  return queues;
}

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
 * unacknowledged bytes for each stalled connection (one read for all of them, off the main thread)
 * and adds what this process still holds; the
 * connection keeps that as `unsent` until anything moves (a write, a drain), and a connection that
 * then resets is billed that much less (see ConnectionMeter).
 */
export class StallWatch {
  /** Connections whose last write was not taken at once, with how many looks in a row found them stalled. */
  private readonly suspects = new Map<Watched, number>();
  private timer: NodeJS.Timeout | undefined;
  private looking = false;

  constructor(private readonly everyMs = 100) {}

  suspect(connection: Watched): void {
    if (!this.suspects.has(connection)) this.suspects.set(connection, 0);
    this.timer ??= setTimeout(() => void this.look(), this.everyMs).unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.suspects.clear();
  }

  private async look(): Promise<void> {
    this.timer = undefined;
    if (this.looking) return;
    // Stalled at two checks in a row: a client that stopped reading, not one a moment behind.
    const stalled: Watched[] = [];
    for (const [connection, checks] of this.suspects) {
      if (connection.socket.destroyed || !isStalled(connection.socket)) this.suspects.delete(connection);
      else if (checks >= 1) stalled.push(connection);
      else this.suspects.set(connection, checks + 1);
    }
    if (stalled.length > 0) await this.measure(stalled);
    if (this.suspects.size > 0) this.timer ??= setTimeout(() => void this.look(), this.everyMs).unref();
  }

  private async measure(stalled: Watched[]): Promise<void> {
    this.looking = true;
    const movesBefore = stalled.map((connection) => connection.moves);
    const queues = await readKernelQueues();
    this.looking = false;
    for (const [index, connection] of stalled.entries()) {
      const { socket } = connection;
      if (socket.destroyed || !isStalled(socket) || movesBefore[index] !== connection.moves) continue;
      const kernel = queues.get(queueKey(socket.localPort, socket.remotePort))?.tx;
      if (kernel !== undefined) connection.unsent = kernel + pendingHere(socket as NodeSocket);
    }
  }
}
