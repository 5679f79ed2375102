import type { Server } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";

export interface Listening {
  address: AddressInfo;
  /** Stops accepting, ends every connection still open, and calls `done` once all are gone. */
  close(done: () => void): void;
}

/**
 * Puts the gateway's HTTP server on `host:port`. Under Node it listens itself.
 *
 * Under Bun (the release's self-contained executable) an HTTP server that accepts its own
 * connections serves them natively: the socket its "connection" event hands out carries none of
 * the exchange's bytes (no writes, no `data`, no `_httpMessage`), so the meter billed 0 bytes for
 * every request. There a plain net server accepts, with http.Server's own socket options, and hands
 * each socket to the HTTP server (`emit("connection")`, as Node's http.Server does inside), which
 * then reads and writes that socket as Node does, and the meter sees every byte.
 */
export async function listenGateway(server: Server, port: number, host: string): Promise<Listening> {
  if (process.versions.bun === undefined) {
    await listening(server, port, host);
    return {
      address: server.address() as AddressInfo,
      close(done) {
        server.close(() => done());
        server.closeAllConnections();
      },
    };
  }
  const sockets = new Set<Socket>();
  const front = createNetServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    server.emit("connection", socket);
  });
  await listening(front, port, host);
  return {
    address: front.address() as AddressInfo,
    close(done) {
      front.close(() => done());
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** An http.Server is a net.Server: one wait for either. */
function listening(server: NetServer, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
