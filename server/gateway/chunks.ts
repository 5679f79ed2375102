import type { Socket } from "node:net";
import type { RequestFraming } from "./framing";

/** Node's HTTP parser as it sits on a server socket: the few internals {@link ChunkReader} uses. */
interface NodeHttpParser {
  /** True while the parser reads the socket itself, in C++. */
  _consumed?: boolean;
  /** Valid only during the `kOnExecute` callback: a copy of the chunk just parsed. */
  getCurrentBuffer?: () => Buffer;
  constructor: { kOnExecute?: unknown };
  [slot: number]: unknown;
}

/** Where a connection's bytes come from: Node's parser (the fast way) or a `data` listener (the fallback). */
export type ChunkSource = "parser" | "listener";

/** Tests set this to "listener" to run the fallback on a Node that has the parser hook. */
export const chunkSources: { preferred: ChunkSource } = { preferred: "parser" };

/**
 * Hands `framing` every chunk the client sends on an HTTP server socket, after Node's parser has
 * emitted the requests the chunk completes (so their exchanges are known when their bytes arrive).
 *
 * Node's server parses in C++ straight from the socket and tells JS of messages, never of where
 * they end. A `data` listener sees the bytes, but turns that off: every request then goes through
 * the stream machinery in JS, and large exchanges cause more garbage collection. So where the parser reads the socket itself, this wraps the
 * callback Node's C++ makes after each chunk it parsed (`kOnExecute`), during which
 * `getCurrentBuffer()` holds a copy of the chunk; Node's own server uses both for CONNECT. A chunk
 * that is all body of one request is only counted, not copied. A Node without the hook gets the
 * `data` listener: the same bytes, slower.
 *
 * After a CONNECT, Node hands the socket over and its bytes come as `data` events: call
 * {@link ChunkReader.followTunnel} once the tunnel is known.
 */
export class ChunkReader {
  readonly source: ChunkSource;
  private following = false;

  constructor(
    private readonly socket: Socket,
    private readonly framing: RequestFraming,
  ) {
    this.source = chunkSources.preferred === "parser" && this.hookParser() ? "parser" : "listener";
    if (this.source === "listener") this.listen();
  }

  /** From now on the socket carries a tunnel: its bytes arrive as `data` events. */
  followTunnel(): void {
    if (this.source === "parser") this.listen();
  }

  private listen(): void {
    if (this.following) return;
    this.following = true;
    this.socket.on("data", (chunk: Buffer) => this.framing.feed(chunk));
  }

  private hookParser(): boolean {
    const parser = (this.socket as Socket & { parser?: NodeHttpParser | null }).parser;
    const slot = parser?.constructor.kOnExecute;
    if (!parser?._consumed || typeof slot !== "number" || typeof parser.getCurrentBuffer !== "function") return false;
    const afterChunk = parser[slot];
    if (typeof afterChunk !== "function") return false;
    const currentChunk = parser.getCurrentBuffer.bind(parser);
    parser[slot] = (parsed: unknown) => {
      // `parsed` is the chunk's length, unless the parser stopped early (CONNECT) or failed; either
      // happens only where a request ends, which skipBody refuses.
      if (typeof parsed === "number" && this.framing.skipBody(parsed)) return afterChunk(parsed);
      // Taken first: on a CONNECT, Node's callback frees the parser.
      const chunk = currentChunk();
      const result = afterChunk(parsed);
      this.framing.feed(chunk);
      return result;
    };
    return true;
  }
}
