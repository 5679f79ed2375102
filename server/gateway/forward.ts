import { type Agent, type IncomingMessage, request, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { Refusal } from "./refusals";
import type { AbsoluteTarget, Target } from "./targets";

/** Headers of one connection, never forwarded (RFC 9110 §7.6.1), plus the gateway's own credentials. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** Raw headers minus the hop-by-hop ones and any the Connection header names; order and case kept. */
export function endToEndHeaders(raw: string[]): string[] {
  const named = new Set(HOP_BY_HOP);
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() === "connection") {
      for (const token of (raw[i + 1] as string).split(",")) named.add(token.trim().toLowerCase());
    }
  }
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!named.has((raw[i] as string).toLowerCase())) kept.push(raw[i] as string, raw[i + 1] as string);
  }
  return kept;
}

function unreachable(): Refusal {
  return new Refusal("target_unreachable", "The gateway could not reach the target.");
}

/** What the client sent, minus hop-by-hop headers and its Host, which the absolute URL replaces. */
function forwardedHeaders(raw: string[], hostHeader: string): string[] {
  const kept = endToEndHeaders(raw);
  const headers = ["Host", hostHeader];
  for (let i = 0; i < kept.length; i += 2) {
    if ((kept[i] as string).toLowerCase() !== "host") headers.push(kept[i] as string, kept[i + 1] as string);
  }
  return headers;
}

/** Calls `reached` once a connection to the target is open (at once for a pooled one). */
function onceConnected(socket: Socket, reached: () => void): void {
  if (socket.connecting) socket.once("connect", reached);
  else reached();
}

/**
 * Sends an absolute-form request on to its target (HTTP/1.1, Host from the absolute URL, whatever
 * version and Host the client sent) and streams the answer back. `reached` is called once the
 * target's connection is open. Resolves with the target's status once the answer has started;
 * rejects with `target_unreachable` when no answer came.
 */
export function forwardRequest(
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  absolute: Pick<AbsoluteTarget, "path" | "hostHeader">,
  agent: Agent,
  reached: () => void,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const upstream = request({
      host: target.connectTo,
      port: target.port,
      method: req.method,
      path: absolute.path,
      headers: forwardedHeaders(req.rawHeaders, absolute.hostHeader),
      agent,
      ...(target.lookup ? { lookup: target.lookup, autoSelectFamily: true } : {}),
    });
    upstream.once("socket", (socket) => onceConnected(socket, reached));
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, endToEndHeaders(answer.rawHeaders));
      answer.pipe(res);
      answer.on("error", () => res.destroy());
      resolve(answer.statusCode ?? 502);
    });
    upstream.on("error", () => {
      if (res.headersSent) res.destroy();
      else reject(unreachable());
    });
    // The client went away mid-exchange: stop the target's side too.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
}

/** A TCP connection to the target, or `target_unreachable`. */
export function openTunnel(target: Target): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const upstream = connect({
      host: target.connectTo,
      port: target.port,
      ...(target.lookup ? { lookup: target.lookup, autoSelectFamily: true } : {}),
    });
    upstream.once("connect", () => {
      upstream.off("error", onError);
      resolve(upstream);
    });
    const onError = (): void => {
      upstream.destroy();
      reject(unreachable());
    };
    upstream.once("error", onError);
  });
}

/** Joins client and target until either side ends; resolves when the client's socket has closed. */
export function splice(client: Socket, upstream: Socket, head: Buffer): Promise<void> {
  const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
  upstream.on("error", () => client.destroy());
  client.on("error", () => upstream.destroy());
  upstream.on("close", () => client.end());
  client.on("close", () => upstream.destroy());
  if (head.length > 0) upstream.write(head);
  upstream.pipe(client);
  client.pipe(upstream);
  return closed;
}
