import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { LoginSlot } from "./admission";
import { ChunkReader } from "./chunks";
import { RequestFraming } from "./framing";
import type { Exchange } from "./meter";
import type { StallWatch } from "./unsent";

/** Node's own link from a socket to the answer being written on it (stable since Node 0.x, not documented). */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * The most one write to a client carries: the meter counts, and a ceiling cuts, between writes, so
 * this bounds how far past a ceiling an exchange goes (the contract: within 64 KB). Node reads
 * sockets in chunks of at most this; Bun hands on larger ones (a 57 MB download crossed a 1 MB
 * ceiling by 338 KB), so a larger chunk is written in slices of it.
 */
const MAX_WRITE_BYTES = 64 * 1024;

function byteLength(chunk: unknown, encoding: unknown): number {
  if (typeof chunk === "string")
    return Buffer.byteLength(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
  return chunk instanceof Uint8Array ? chunk.byteLength : 0;
}

/**
 * One client connection's bytes, attributed to the exchange they belong to. Bytes read are split at
 * request boundaries by {@link RequestFraming}; bytes written belong to the answer Node is writing at
 * that moment (Node writes pipelined answers one after another), or, after CONNECT, to the tunnel.
 * Bytes that arrive before their exchange is known (a pipelined request Node has not emitted yet, a
 * `100 Continue`) wait for it. The connection serves one proxy user, and after a refusal it serves
 * no one: its later requests are dropped with it.
 */
export class ConnectionMeter {
  /** The proxy user whose traffic this connection carries, from its first admitted request. */
  userId: string | undefined;
  /** A refusal was sent: the connection closes after it, and requests pipelined behind it are not served. */
  refused = false;
  /** The last header that proved a login on it (see Admission). */
  proven: LoginSlot["proven"];
  private readonly framing = new RequestFraming((index, bytes) => this.read(index, bytes));
  private readonly chunks: ChunkReader;
  /** The exchanges not over yet, oldest first: `open[i]` is request `first + i`, `answers[i]` its answer. */
  private readonly open: (Exchange | undefined)[] = [];
  private readonly answers: (ServerResponse | undefined)[] = [];
  private first = 0;
  /** Bytes of requests Node has not emitted yet (pipelined behind a paused parser); made when first needed. */
  private earlyReads: Map<number, number> | undefined;
  /** Bytes of the answer Node is writing before its request reached the gateway (a `100 Continue`). */
  private early: { answer: ServerResponse; bytes: number } | undefined;
  private tunnel: Exchange | undefined;
  /** The exchange the last bytes written belong to: a reset's unsent bytes come off its bill. */
  private lastWritten: Exchange | undefined;
  /** See {@link Watched}. */
  unsent: number | undefined;
  moves = 0;
  private watched = false;

  constructor(
    readonly socket: HttpSocket,
    stalls: StallWatch,
  ) {
    this.chunks = new ChunkReader(socket, this.framing);
    const write = socket.write as (...args: unknown[]) => boolean;
    const meteredWrite = (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
      // Nothing written after the connection ended is billed: it never leaves the machine.
      const open = socket.writable;
      const accepted = write.call(socket, chunk, encoding, callback);
      // Counted after the write, so a cut it causes (a ceiling crossed) comes after this chunk, not before it.
      if (open) {
        this.moved();
        this.wrote(byteLength(chunk, encoding));
        // Node's buffer is over its mark (every large chunk, and http writes are corked until the next
        // tick): the watch looks, a little later, whether the kernel has taken it.
        if (!accepted) this.suspect(stalls);
      }
      return accepted;
    };
    socket.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
      if (!(chunk instanceof Uint8Array) || chunk.byteLength <= MAX_WRITE_BYTES)
        return meteredWrite(chunk, encoding, callback);
      // Slices until a cut ends the connection; the last slice carries the callback, which a write
      // after the cut still calls (with the stream's error), as it would have for the whole chunk.
      let from = 0;
      for (; chunk.byteLength - from > MAX_WRITE_BYTES && socket.writable; from += MAX_WRITE_BYTES)
        meteredWrite(chunk.subarray(from, from + MAX_WRITE_BYTES));
      return meteredWrite(chunk.subarray(from), encoding, callback);
    }) as Socket["write"];
  }

  /** Listens for what a stall needs only once one may happen, so a connection of small answers pays nothing. */
  private suspect(stalls: StallWatch): void {
    if (!this.watched) {
      this.watched = true;
      this.socket.on("drain", () => this.moved());
      // A reset while stalled: what the kernel and this process still held never reached the client.
      this.socket.once("close", (hadError: boolean) => {
        if (hadError && this.unsent !== undefined) this.lastWritten?.count(-this.unsent);
      });
    }
    stalls.suspect(this);
  }

  private moved(): void {
    this.moves++;
    this.unsent = undefined;
  }

  /** The exchange of the next request Node emitted on this connection; `answer` is absent for CONNECT. Returns its index. */
  attach(exchange: Exchange, answer?: ServerResponse): number {
    const index = this.first + this.open.length;
    this.open.push(exchange);
    this.answers.push(answer);
    const early = this.earlyReads?.get(index);
    if (early !== undefined) {
      exchange.count(early);
      this.earlyReads?.delete(index);
    }
    if (!answer) {
      this.tunnel = exchange;
      this.chunks.followTunnel();
    } else {
      if (this.early?.answer === answer) exchange.count(this.early.bytes);
      this.early = undefined;
    }
    return index;
  }

  /** The exchange is over: nothing more is attributed to it. */
  detach(index: number): void {
    this.open[index - this.first] = undefined;
    this.answers[index - this.first] = undefined;
    while (this.open.length > 0 && this.open[0] === undefined) {
      this.open.shift();
      this.answers.shift();
      this.first++;
    }
  }

  cut(): void {
    this.socket.destroy();
  }

  private read(index: number, bytes: number): void {
    const position = index - this.first;
    // A position before the first is an exchange already over: it counts nothing more.
    if (position < this.open.length) this.open[position]?.count(bytes);
    else {
      this.earlyReads ??= new Map();
      this.earlyReads.set(index, (this.earlyReads.get(index) ?? 0) + bytes);
    }
  }

  private wrote(bytes: number): void {
    if (this.tunnel) {
      this.lastWritten = this.tunnel;
      this.tunnel.count(bytes);
      return;
    }
    const answer = this.socket._httpMessage;
    if (!answer) return;
    const exchange = this.open[this.answers.indexOf(answer)];
    this.lastWritten = exchange;
    if (exchange) exchange.count(bytes);
    else if (this.early?.answer === answer) this.early.bytes += bytes;
    else this.early = { answer, bytes };
  }
}
