import { connect, type Socket } from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  json: any;
}

/** A TCP connection to the server at `url` (`http://host:port`), once it is open. */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(port) });
  return new Promise((resolve, reject) => {
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves once the peer has closed the socket (or it failed). */
export function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) resolve();
    else socket.once("close", () => resolve());
  });
}

/**
 * One request written byte for byte on its own connection (`connection: close`), and the answer
 * read to the close: nothing between the test and the server rewrites the body's bytes.
 */
export async function rawRequest(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<RawAnswer> {
  const socket = await openSocket(url);
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.on("error", () => {});
  const lines = [`${method} ${path} HTTP/1.1`, `host: ${new URL(url).host}`, "connection: close"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`content-length: ${body.length}`);
  socket.write(Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), body ?? Buffer.alloc(0)]));
  await closed(socket);
  return parseAnswer(Buffer.concat(chunks));
}

function parseAnswer(received: Buffer): RawAnswer {
  const end = received.indexOf("\r\n\r\n");
  if (end < 0) throw new Error(`no complete answer: ${JSON.stringify(received.toString("latin1"))}`);
  const [statusLine = "", ...headerLines] = received.subarray(0, end).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const text = received.subarray(end + 4).toString("utf8");
  return { status: Number(statusLine.split(" ")[1]), headers, json: text.length > 0 ? JSON.parse(text) : undefined };
}
