/** Longest head or framing line followed; Node refuses far shorter heads (16 KB), so past it nothing is billed anyway. */
const MAX_LINE = 128 * 1024;
/** How much of a chunk is searched for the end of a head at once, so a head followed by a large body is not copied whole. */
const SEARCH_WINDOW = 16 * 1024;
const END_OF_HEAD = /\n\r?\n/;

type State = "head" | "body" | "chunkSize" | "chunkData" | "chunkEnd" | "trailer" | "tunnel";

/**
 * Follows the framing of the requests on one client connection, byte for byte, beside Node's own
 * parser: where each request's head ends, how long its body is (content-length, or chunked with its
 * framing and trailers), and that everything after a CONNECT head belongs to the tunnel. Each byte is
 * handed to `count` with the index of the request it belongs to (0 for the connection's first, in the
 * order Node emits them), so an exchange is billed exactly its own bytes however requests are
 * pipelined. It validates nothing: a request Node refuses closes the connection, and nothing after
 * it is billed.
 */
export class RequestFraming {
  private index = 0;
  private state: State = "head";
  /** The head or framing line read so far (latin1), when it spans chunks. */
  private pending = "";
  private remaining = 0;
  private chunked = false;

  constructor(private readonly count: (index: number, bytes: number) => void) {}

  feed(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      const index = this.index;
      const used = this.step(chunk, offset);
      this.count(index, used);
      offset += used;
    }
  }

  /**
   * Counts `length` bytes without looking at them when they are all body of the current request (the
   * request does not end before they do); returns false, counting nothing, otherwise.
   */
  skipBody(length: number): boolean {
    if ((this.state !== "body" && this.state !== "chunkData") || length >= this.remaining) return false;
    this.remaining -= length;
    this.count(this.index, length);
    return true;
  }

  /** Consumes bytes of the current state from `offset`; returns how many (at least one). */
  private step(chunk: Buffer, offset: number): number {
    const available = chunk.length - offset;
    switch (this.state) {
      case "tunnel":
        return available;
      case "body":
      case "chunkData": {
        const used = Math.min(available, this.remaining);
        this.remaining -= used;
        if (this.remaining === 0) {
          if (this.state === "body") this.nextRequest();
          else this.state = "chunkEnd";
        }
        return used;
      }
      case "head":
        return this.readHead(chunk, offset);
      default:
        return this.readLine(chunk, offset);
    }
  }

  private readHead(chunk: Buffer, offset: number): number {
    // Empty lines before a request line are allowed (RFC 9112 §2.2) and belong to the request after them.
    if (this.pending === "" && (chunk[offset] === 13 || chunk[offset] === 10)) return 1;
    const end = Math.min(chunk.length, offset + SEARCH_WINDOW);
    const before = this.pending.length;
    // Up to three bytes of the end of the head may sit in the previous chunk.
    const from = Math.max(0, before - 3);
    const text = this.pending + chunk.toString("latin1", offset, end);
    const match = END_OF_HEAD.exec(text.slice(from));
    if (match === null) {
      this.pending = text.length > MAX_LINE ? "" : text;
      if (text.length > MAX_LINE) this.state = "tunnel";
      return end - offset;
    }
    const headEnd = from + match.index + match[0].length;
    this.pending = "";
    this.beginBody(text.slice(0, headEnd));
    return headEnd - before;
  }

  private beginBody(head: string): void {
    const method = head.slice(0, head.indexOf(" ")).toUpperCase();
    const length = /\ncontent-length[ \t]*:[ \t]*(\d+)/i.exec(head)?.[1];
    this.chunked = /\ntransfer-encoding[ \t]*:/i.test(head);
    if (method === "CONNECT") this.state = "tunnel";
    else if (this.chunked) this.state = "chunkSize";
    else if (length !== undefined && Number(length) > 0) {
      this.state = "body";
      this.remaining = Number(length);
    } else this.nextRequest();
  }

  /** A chunk-size line, the CRLF after a chunk's data, or a trailer line. */
  private readLine(chunk: Buffer, offset: number): number {
    const newline = chunk.indexOf(10, offset);
    const end = newline === -1 ? chunk.length : newline + 1;
    this.pending += chunk.toString("latin1", offset, end);
    if (newline === -1) {
      if (this.pending.length > MAX_LINE) this.state = "tunnel";
      return end - offset;
    }
    const line = this.pending.replace(/\r?\n$/, "");
    this.pending = "";
    if (this.state === "chunkEnd") this.state = "chunkSize";
    else if (this.state === "trailer") {
      if (line === "") this.nextRequest();
    } else {
      const size = Number.parseInt(line.split(";")[0]?.trim() ?? "", 16);
      if (size > 0) {
        this.state = "chunkData";
        this.remaining = size;
      } else this.state = "trailer";
    }
    return end - offset;
  }

  private nextRequest(): void {
    this.index++;
    this.state = "head";
  }
}
