import type { ServerResponse } from "node:http";

/**
 * Bytes a stream may have waiting in the server, beyond the list it got on opening, before it counts
 * as a reader that stopped: the page then reconnects and starts again from the full list. A page
 * that reads holds a few kilobytes at most.
 */
export const STREAM_QUEUE_BYTES = 1024 * 1024;
/** How long a stream's socket may refuse more before the stream is closed, whatever it holds. */
export const STREAM_STALL_MS = 10_000;
/** Open streams at once; one more is refused with 503. A page holds one. */
export const MAX_STREAMS = 2000;
/**
 * Streams written to per turn of the event loop. A thousand writes at once held the API's requests
 * for milliseconds each tick; between slices of a hundred, requests are answered.
 */
export const STREAMS_PER_TURN = 100;

interface Stream {
  readonly res: ServerResponse;
  /** What this stream may hold: the list it opened with is shared with other streams, not copied. */
  readonly allowance: number;
  /** When its socket last refused more (write returned false), until it drains. */
  stalledSince: number | undefined;
}

/**
 * The console's open event streams. A frame is one Buffer, built once and handed to every stream: a
 * stream that cannot take it at once keeps a reference in its queue, not a copy. A stream whose queue
 * grows past its allowance, or whose socket has refused more for too long, is closed: one page that
 * stops reading costs the server at most its allowance, and never slows the others.
 */
export class EventStreams {
  private readonly streams = new Set<Stream>();
  /** Frames on their way, each to the streams open when it was built, in order. */
  private readonly queue: { frame: Buffer; recipients: Stream[]; next: number }[] = [];
  private pumping = false;
  /** Streams closed for falling behind, since the start. */
  dropped = 0;

  get size(): number {
    return this.streams.size;
  }

  get full(): boolean {
    return this.streams.size >= MAX_STREAMS;
  }

  /** Answers the request with an event stream that starts with `first`, frames shared with other streams. */
  open(res: ServerResponse, first: Buffer[], onClose: () => void): void {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-content-type-options": "nosniff",
    });
    const opening = first.reduce((sum, part) => sum + part.length, 0);
    const stream: Stream = { res, allowance: opening + STREAM_QUEUE_BYTES, stalledSince: undefined };
    this.streams.add(stream);
    res.on("close", () => {
      this.streams.delete(stream);
      onClose();
    });
    res.on("drain", () => {
      stream.stalledSince = undefined;
    });
    const now = performance.now();
    for (const part of first) this.write(stream, part, now);
  }

  /**
   * The same frame to every stream open now, a slice of them per turn of the event loop; those that
   * fell behind are closed instead. A stream that opens later has this frame's news in its opening.
   */
  send(frame: Buffer): void {
    if (this.streams.size === 0) return;
    this.queue.push({ frame, recipients: [...this.streams], next: 0 });
    if (!this.pumping) {
      this.pumping = true;
      this.pump();
    }
  }

  /** Bytes each open stream has waiting in the server, for the tests and the bench. */
  queuedBytes(): number[] {
    return [...this.streams].map((stream) => stream.res.writableLength);
  }

  closeAll(): void {
    for (const { res } of this.streams) res.end();
    this.streams.clear();
    this.queue.length = 0;
  }

  private readonly pump = (): void => {
    const now = performance.now();
    let budget = STREAMS_PER_TURN;
    while (budget > 0 && this.queue.length > 0) {
      const job = this.queue[0];
      if (!job) break;
      for (; budget > 0 && job.next < job.recipients.length; budget--) {
        const stream = job.recipients[job.next++];
        if (stream && this.streams.has(stream)) this.write(stream, job.frame, now);
      }
      if (job.next === job.recipients.length) this.queue.shift();
    }
    if (this.queue.length > 0) setImmediate(this.pump);
    else this.pumping = false;
  };

  private write(stream: Stream, frame: Buffer, now: number): void {
    const { res } = stream;
    if (res.destroyed) return;
    const stalledTooLong = stream.stalledSince !== undefined && now - stream.stalledSince > STREAM_STALL_MS;
    if (stalledTooLong || res.writableLength + frame.length > stream.allowance) {
      this.dropped++;
      this.streams.delete(stream);
      res.destroy();
      return;
    }
    if (!res.write(frame)) stream.stalledSince ??= now;
  }
}
