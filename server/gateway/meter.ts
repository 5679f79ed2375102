import type { Socket } from "node:net";
import { type Clock, utcDay } from "../clock";
import type { Store } from "../store";

interface Marks {
  read: number;
  written: number;
}

/**
 * Counts exactly what crossed the client's connection: every byte read from and written to the
 * socket, headers, bodies and framing, attributed to the exchange that carried it. A keep-alive
 * connection carries exchanges one after another, so each exchange takes the bytes since the previous
 * one ended (the previous mark) up to its own end. Bytes of refused exchanges are skipped, not billed.
 */
export class TrafficMeter {
  private readonly marks = new WeakMap<Socket, Marks>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly onCommit: () => void,
  ) {}

  /** Bytes the socket carried since the last call for it (or since it opened). */
  take(socket: Socket): number {
    const read = socket.bytesRead;
    const written = socket.bytesWritten ?? 0;
    const marks = this.marks.get(socket) ?? { read: 0, written: 0 };
    const bytes = read - marks.read + (written - marks.written);
    this.marks.set(socket, { read, written });
    return bytes;
  }

  /** Adds one request and its bytes to the proxy user's usage for the current UTC day (server clock). */
  record(proxyUserId: string, bytes: number): void {
    this.store.recordTraffic(proxyUserId, utcDay(this.clock.now()), bytes, 1);
    this.onCommit();
  }
}
