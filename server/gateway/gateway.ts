import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { SecretHasher } from "../auth";
import type { Clock } from "../clock";
import { RateLimiter } from "../rateLimit";
import type { Store } from "../store";
import { requestIdFactory } from "../tokens";
import { Admission } from "./admission";
import { PropagatingDirectory } from "./directory";
import { forwardRequest, openTunnel, splice } from "./forward";
import { TrafficMeter } from "./meter";
import { Refusal } from "./refusals";
import { parseAbsoluteUrl, parseAuthority, TargetPolicy } from "./targets";

export interface GatewayOptions {
  /** Default 0: an ephemeral port. The host is the API's. */
  port?: number;
  /** Delay before a change of `enabled`, of the limits, or a deletion reaches the gateway; default 2000 ms. */
  propagationDelayMs?: number;
  /** New requests per second per proxy user; default 100. */
  requestsPerSecond?: number;
  /** Hosts forwarded to besides loopback addresses; default none. */
  allowedHosts?: string[];
}

export const GATEWAY_DEFAULTS = { propagationDelayMs: 2000, requestsPerSecond: 100 } as const;

export interface Gateway {
  readonly url: string;
  setPropagationDelay(ms: number): void;
  setRateLimit(requestsPerSecond: number): void;
  close(): Promise<void>;
}

interface GatewayContext {
  store: Store;
  clock: Clock;
  host: string;
  log: ((line: string) => void) | undefined;
  onCommit: () => void;
}

/**
 * The emulated proxy gateway: an HTTP forward proxy (absolute-form requests and CONNECT tunnels) on
 * its own port, sharing the API's store and clock. Admission happens when a request arrives; what is
 * admitted runs to its end, whatever changes meanwhile. Traffic is metered to the proxy user.
 */
export async function startGateway(options: GatewayOptions, context: GatewayContext): Promise<Gateway> {
  const { store, clock, log } = context;
  const directory = new PropagatingDirectory(store, options.propagationDelayMs ?? GATEWAY_DEFAULTS.propagationDelayMs);
  const limiter = new RateLimiter(options.requestsPerSecond ?? GATEWAY_DEFAULTS.requestsPerSecond, 1000);
  const admission = new Admission(store, clock, directory, limiter, new SecretHasher());
  const targets = new TargetPolicy(options.allowedHosts);
  const meter = new TrafficMeter(store, clock, context.onCommit);
  const agent = new Agent({ keepAlive: true });
  const tunnels = new Set<Socket>();
  const nextRequestId = requestIdFactory();

  const note = (requestId: string, what: string, outcome: string, started: number, userId?: string, bytes = 0) =>
    log?.(
      `${requestId} gateway ${what} ${outcome} ${bytes}B ${(performance.now() - started).toFixed(1)}ms ${userId ?? "-"}`,
    );

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = nextRequestId();
    const started = performance.now();
    const target = parseAbsoluteUrl(req.url ?? "");
    const what = `${req.method ?? "?"} ${target ? `${target.host}:${target.port}` : "-"}`;
    let meteredTo: string | undefined;
    let outcome: string;
    const ended = exchangeEnded(req, res);
    try {
      if (!target) throw new Refusal("bad_request", "The gateway serves absolute-form http:// requests and CONNECT.");
      const user = admission.admit(header(req.headers["proxy-authorization"]));
      const checked = await targets.check(target.host, target.port);
      meteredTo = user.id;
      outcome = String(await forwardRequest(req, res, checked, target.path, agent));
    } catch (error) {
      meteredTo = undefined;
      const refusal = error instanceof Refusal ? error : new Refusal("target_unreachable", "The gateway failed.");
      refusal.send(res, requestId, hasUnreadBody(req));
      outcome = `${refusal.status} ${refusal.code}`;
    }
    await ended;
    const bytes = meter.take(req.socket);
    if (meteredTo !== undefined) meter.record(meteredTo, bytes);
    note(requestId, what, outcome, started, meteredTo, meteredTo ? bytes : 0);
  }

  async function onConnect(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const requestId = nextRequestId();
    const started = performance.now();
    const authority = parseAuthority(req.url ?? "");
    const what = `CONNECT ${authority ? `${authority.host}:${authority.port}` : "-"}`;
    tunnels.add(client);
    client.on("error", () => client.destroy());
    const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
    try {
      if (!authority) throw new Refusal("bad_request", "CONNECT needs a host:port target.");
      const user = admission.admit(header(req.headers["proxy-authorization"]));
      const upstream = await openTunnel(await targets.check(authority.host, authority.port));
      client.write(`HTTP/1.1 200 Connection Established\r\nx-request-id: ${requestId}\r\n\r\n`);
      await splice(client, upstream, head);
      // Counted when the tunnel closes: the CONNECT exchange and everything it carried, both ways.
      const bytes = meter.take(client);
      meter.record(user.id, bytes);
      note(requestId, what, "200 tunnel closed", started, user.id, bytes);
    } catch (error) {
      const refusal = error instanceof Refusal ? error : new Refusal("target_unreachable", "The gateway failed.");
      if (!client.destroyed) refusal.sendRaw(client, requestId);
      await closed;
      meter.take(client);
      note(requestId, what, `${refusal.status} ${refusal.code}`, started);
    } finally {
      tunnels.delete(client);
    }
  }

  const server: Server = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    onRequest(req, res).catch((error: unknown) => {
      (log ?? console.error)(`gateway: ${error instanceof Error ? error.message : String(error)}`);
      res.destroy();
    });
  });
  server.on("connect", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    onConnect(req, socket, head).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, context.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    setPropagationDelay: (ms) => directory.setDelay(ms),
    setRateLimit: (perSecond) => limiter.setLimit(perSecond),
    close: () =>
      new Promise<void>((resolve) => {
        directory.detach();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const tunnel of tunnels) tunnel.destroy();
        agent.destroy();
      }),
  };
}

/** A refused request's body is never read; its connection then closes, so those bytes never count as the next request's. */
function hasUnreadBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? undefined : value;
}

/** Both halves are over: the answer is written (or the connection dropped) and the request read to its end. */
function exchangeEnded(req: IncomingMessage, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    res.once("close", () => {
      if (req.complete || req.destroyed) resolve();
      else {
        req.once("end", () => resolve());
        req.once("close", () => resolve());
      }
    });
  });
}
