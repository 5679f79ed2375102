import { connect, type Socket } from "node:net";

/**
 * Forked by the console streams bench, so that reading a thousand streams costs the bench's own
 * process nothing: opens `count` console event streams, every one reading and discarding except the
 * last, which reads nothing after its status line. Says on IPC when all are open, and on request how
 * many the server has closed.
 */
const [url = "", cookie = "", countText = "0"] = process.argv.slice(2);
const { hostname, port } = new URL(url);
const count = Number(countText);
let open = 0;
let closedByServer = 0;
const sockets: Socket[] = [];

for (let i = 0; i < count; i++) {
  const socket = connect({ host: hostname, port: Number(port) });
  sockets.push(socket);
  socket.on("error", () => undefined);
  socket.on("close", () => closedByServer++);
  socket.write(`GET /console/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\nCookie: ${cookie}\r\n\r\n`);
  socket.once("data", (first: Buffer) => {
    if (!first.toString("latin1").startsWith("HTTP/1.1 200")) throw new Error(first.toString("latin1", 0, 200));
    if (i === count - 1) socket.pause();
    else socket.on("data", () => undefined);
    if (++open === count) process.send?.({ open });
  });
}

process.on("message", () => process.send?.({ closedByServer }));
process.on("disconnect", () => {
  for (const socket of sockets) socket.destroy();
  process.exit(0);
});
