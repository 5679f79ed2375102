import type { Socket } from "node:net";

/**
 * Client connections that have not yet had a request admitted: each is closed once the header
 * timeout has passed since it was accepted (slow or missing headers, a refused request the client
 * keeps open), and one address may hold only so many at once: past that, a new connection from it
 * is closed at once, before it is read. Asking a socket for its address costs a system call, so
 * addresses are counted only while there are more unauthenticated connections in all than one
 * address may hold (below that no address can be over), which a flood reaches and ordinary traffic
 * does not.
 */
export class UnauthenticatedConnections {
  /** Each with when it was accepted (ms, monotonic); insertion order is age order. */
  private readonly open = new Map<Socket, number>();
  /** Per address, only while `open` is large enough for one address to reach the cap. */
  private byAddress: Map<string, number> | undefined;
  /** How often the expired ones are closed: they close within a quarter of the timeout past it (1 s at most). */
  readonly sweepEveryMs: number;
  // Node's own header timeout never closes a connection that sent nothing, nor one that keeps its half open after the 408.
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly perAddress: number,
    private readonly timeoutMs: number,
  ) {
    if (!Number.isSafeInteger(perAddress) || perAddress < 1)
      throw new RangeError(`maxUnauthenticatedPerAddress must be a positive integer, got ${perAddress}`);
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1)
      throw new RangeError(`headerTimeoutMs must be a positive integer of milliseconds, got ${timeoutMs}`);
    this.sweepEveryMs = Math.max(25, Math.min(1000, Math.floor(timeoutMs / 4)));
    this.sweeper = setInterval(() => this.sweep(), this.sweepEveryMs).unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
  }

  /** Closes every connection older than the header timeout. */
  sweep(now = performance.now()): void {
    for (const [socket, acceptedAt] of this.open) {
      if (now - acceptedAt < this.timeoutMs) return;
      this.remove(socket);
      socket.destroy();
    }
  }

  /** A new connection; false when its address already holds its cap (the caller closes it). */
  add(socket: Socket): boolean {
    this.open.set(socket, performance.now());
    if (this.open.size <= this.perAddress) return true;
    if (this.byAddress === undefined) {
      this.byAddress = new Map();
      for (const other of this.open.keys()) if (other !== socket) this.count(other, 1);
    }
    if (this.count(socket, 1) <= this.perAddress) return true;
    this.remove(socket);
    return false;
  }

  /** Admitted, or closed: it no longer counts. */
  remove(socket: Socket): void {
    if (!this.open.delete(socket) || this.byAddress === undefined) return;
    this.count(socket, -1);
    if (this.open.size <= this.perAddress / 2) this.byAddress = undefined;
  }

  private count(socket: Socket, change: number): number {
    const map = this.byAddress as Map<string, number>;
    const address = socket.remoteAddress ?? "-";
    const held = (map.get(address) ?? 0) + change;
    if (held > 0) map.set(address, held);
    else map.delete(address);
    return held;
  }
}
