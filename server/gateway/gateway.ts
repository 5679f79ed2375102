import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Clock } from "../clock";
import { RateLimiter } from "../rateLimit";
import type { Store } from "../store";
import { requestIdFactory } from "../tokens";
import { Admission } from "./admission";
import { ConnectionMeter } from "./connection";
import { PropagatingDirectory } from "./directory";
import { forwardRequest, openTunnel, splice } from "./forward";
import { listenGateway } from "./listen";
import { type FailedLoginLimits, FailedLogins } from "./logins";
import { Exchange, TrafficMeter } from "./meter";
import { Refusal } from "./refusals";
import { parseAbsoluteUrl, parseAuthority, TargetPolicy } from "./targets";
import { UnauthenticatedConnections } from "./unauthenticated";
import { StallWatch } from "./unsent";

export interface GatewayOptions {
  /** Default 0: an ephemeral port. The host is the API's. */
  port?: number;
  /** Delay before a change of `enabled`, of the limits, or a deletion reaches the gateway; default 2000 ms. */
  propagationDelayMs?: number;
  /** New requests per second per proxy user; default 100. */
  requestsPerSecond?: number;
  /** Hosts forwarded to besides loopback addresses; default none. */
  allowedHosts?: string[];
  /** Failed logins per minute, per username from one address, per username and per client address; default 20, 100 and 200. */
  failedLogins?: Partial<FailedLoginLimits>;
  /** Requests and tunnels one proxy user may have open at once; default 1000. */
  maxOpenPerUser?: number;
  /** A tunnel that carried nothing either way for this long is closed; default 300 000 (5 minutes). */
  tunnelIdleTimeoutMs?: number;
  /** A request's headers, authenticated or not, must be in within this long, or the connection closes; default 10 000. */
  headerTimeoutMs?: number;
  /** Connections without an admitted request one client address may hold at once; default 1000. */
  maxUnauthenticatedPerAddress?: number;
}

export const GATEWAY_DEFAULTS = {
  propagationDelayMs: 2000,
  requestsPerSecond: 100,
  maxOpenPerUser: 1000,
  tunnelIdleTimeoutMs: 300_000,
  headerTimeoutMs: 10_000,
  maxUnauthenticatedPerAddress: 1000,
} as const;

export interface Gateway {
  readonly url: string;
  setPropagationDelay(ms: number): void;
  setRateLimit(requestsPerSecond: number): void;
  /** Connections stalled by a client that stopped reading whose unsent bytes the gateway has measured. */
  measuredStalls(): number;
  close(): Promise<void>;
}

interface GatewayContext {
  store: Store;
  clock: Clock;
  host: string;
  log: ((line: string) => void) | undefined;
  onCommit: () => void;
}

const ONE_USER_PER_CONNECTION =
  "This connection already carries another proxy user's traffic; open a new connection for each proxy user.";

/**
 * The emulated proxy gateway: an HTTP forward proxy (absolute-form requests and CONNECT tunnels) on
 * its own port, sharing the API's store and clock. Admission happens when a request arrives; each
 * exchange's bytes are metered to its proxy user as they flow (see TrafficMeter). A connection serves
 * one proxy user, and a refusal closes it.
 */
export async function startGateway(options: GatewayOptions, context: GatewayContext): Promise<Gateway> {
  const { store, clock, log } = context;
  const directory = new PropagatingDirectory(store, options.propagationDelayMs ?? GATEWAY_DEFAULTS.propagationDelayMs);
  const limiter = new RateLimiter(options.requestsPerSecond ?? GATEWAY_DEFAULTS.requestsPerSecond, 1000);
  const meter = new TrafficMeter(store, clock, (user) => directory.lookup(user.name, clock.now()), context.onCommit);
  const admission = new Admission(store, clock, directory, {
    limiter,
    failedLogins: new FailedLogins(options.failedLogins),
    maxOpenPerUser: options.maxOpenPerUser ?? GATEWAY_DEFAULTS.maxOpenPerUser,
    openCount: (userId) => meter.openCount(userId),
  });
  const idleMs = options.tunnelIdleTimeoutMs ?? GATEWAY_DEFAULTS.tunnelIdleTimeoutMs;
  const targets = new TargetPolicy(options.allowedHosts);
  const agent = new Agent({ keepAlive: true });
  const connections = new WeakMap<Socket, ConnectionMeter>();
  const stalls = new StallWatch();
  const headerTimeoutMs = options.headerTimeoutMs ?? GATEWAY_DEFAULTS.headerTimeoutMs;
  const unauthenticated = new UnauthenticatedConnections(
    options.maxUnauthenticatedPerAddress ?? GATEWAY_DEFAULTS.maxUnauthenticatedPerAddress,
    headerTimeoutMs,
  );
  const tunnels = new Set<Socket>();
  const nextRequestId = requestIdFactory();

  const note = (requestId: string, what: string, outcome: string, started: number, userId?: string, bytes = 0) =>
    log?.(
      `${requestId} gateway ${what} ${outcome} ${bytes}B ${(performance.now() - started).toFixed(1)}ms ${userId ?? "-"}`,
    );

  /** Admission, then the one-user rule: the proxy user this exchange is metered to. */
  function admit(req: IncomingMessage, connection: ConnectionMeter) {
    const user = admission.admit(
      header(req.headers["proxy-authorization"]),
      () => req.socket.remoteAddress ?? "-",
      connection,
    );
    if (connection.userId === undefined) unauthenticated.remove(req.socket);
    else if (connection.userId !== user.id) throw new Refusal("bad_request", ONE_USER_PER_CONNECTION);
    connection.userId = user.id;
    return user;
  }

  function refusalOf(error: unknown, connection: ConnectionMeter): Refusal {
    connection.refused = true;
    return error instanceof Refusal ? error : new Refusal("target_unreachable", "The gateway failed.");
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = nextRequestId();
    const started = performance.now();
    const connection = connections.get(req.socket) as ConnectionMeter;
    const exchange = new Exchange(meter, connection);
    const index = connection.attach(exchange, res);
    const ended = exchangeEnded(req, res);
    const target = parseAbsoluteUrl(req.url ?? "");
    const what = `${req.method ?? "?"} ${target ? `${target.host}:${target.port}` : "-"}`;
    let meteredTo: string | undefined;
    let outcome = "dropped after a refusal on its connection";
    // Requests pipelined behind a refusal are never answered: the connection closes after it.
    if (!connection.refused) {
      try {
        if (!target) throw new Refusal("bad_request", "The gateway serves absolute-form http:// requests and CONNECT.");
        if (req.headers.upgrade !== undefined)
          throw new Refusal("bad_request", "The gateway does not upgrade connections; use CONNECT for a tunnel.");
        const user = admit(req, connection);
        const checked = targets.check(target.host, target.port);
        exchange.open(user);
        meteredTo = user.id;
        outcome = String(await forwardRequest(req, res, checked, target, agent, () => exchange.commit()));
      } catch (error) {
        const refusal = refusalOf(error, connection);
        refusal.send(res, requestId);
        outcome = `${refusal.status} ${refusal.code}`;
      }
    }
    await ended;
    exchange.end();
    connection.detach(index);
    note(requestId, what, outcome, started, meteredTo, exchange.billed);
  }

  async function onConnect(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const requestId = nextRequestId();
    const started = performance.now();
    const connection = connections.get(client) as ConnectionMeter;
    const exchange = new Exchange(meter, connection);
    connection.attach(exchange);
    const authority = parseAuthority(req.url ?? "");
    const what = `CONNECT ${authority ? `${authority.host}:${authority.port}` : "-"}`;
    tunnels.add(client);
    client.on("error", () => client.destroy());
    const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
    try {
      if (connection.refused) throw new Refusal("bad_request", "A refusal closed this connection.");
      if (!authority) throw new Refusal("bad_request", "CONNECT needs a host:port target.");
      const user = admit(req, connection);
      const checked = targets.check(authority.host, authority.port);
      exchange.open(user);
      const upstream = await openTunnel(checked);
      exchange.commit();
      client.write(`HTTP/1.1 200 Connection Established\r\nx-request-id: ${requestId}\r\n\r\n`);
      client.setTimeout(idleMs, () => client.destroy());
      await splice(client, upstream, head);
      exchange.end();
      note(requestId, what, "200 tunnel closed", started, user.id, exchange.billed);
    } catch (error) {
      const refusal = refusalOf(error, connection);
      // The answer, then the close, whether or not the client closes its half.
      if (!client.destroyed) refusal.sendRaw(client, requestId, () => client.destroy());
      await closed;
      exchange.end();
      note(requestId, what, `${refusal.status} ${refusal.code}`, started);
    } finally {
      tunnels.delete(client);
    }
  }

  const timeouts = {
    keepAliveTimeout: 10_000,
    // For the requests after the first on a connection: Node answers 408 past it.
    headersTimeout: headerTimeoutMs,
    requestTimeout: Math.max(300_000, headerTimeoutMs),
    connectionsCheckingInterval: unauthenticated.sweepEveryMs,
  };
  const server: Server = createServer(timeouts, (req, res) => {
    onRequest(req, res).catch((error: unknown) => {
      (log ?? console.error)(`gateway: ${error instanceof Error ? error.message : String(error)}`);
      res.destroy();
    });
  });
  // Node answers an unknown Expect with 417 itself, without a request event; that would shift the
  // meter's count of requests on the connection, so every request goes through onRequest.
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => server.emit("request", req, res));
  server.on("connection", (socket: Socket) => {
    if (!unauthenticated.add(socket)) {
      socket.destroy();
      return;
    }
    socket.once("close", () => unauthenticated.remove(socket));
    connections.set(socket, new ConnectionMeter(socket, stalls));
  });
  server.on("connect", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    onConnect(req, socket, head).catch(() => socket.destroy());
  });
  const listener = await listenGateway(server, options.port ?? 0, context.host);
  const { address } = listener;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    setPropagationDelay: (ms) => directory.setDelay(ms),
    setRateLimit: (perSecond) => limiter.setLimit(perSecond),
    measuredStalls: () => stalls.measured(),
    close: () =>
      new Promise<void>((resolve) => {
        directory.detach();
        unauthenticated.stop();
        stalls.stop();
        listener.close(() => {
          meter.stop();
          resolve();
        });
        for (const tunnel of tunnels) tunnel.destroy();
        agent.destroy();
      }),
  };
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
