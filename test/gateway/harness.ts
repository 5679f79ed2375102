import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { Client } from "undici";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from "../../server";

/** What the test's own origin server saw: every request's headers and body, to prove what was (not) forwarded. */
export interface Origin {
  url: string;
  port: number;
  seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
  /** `/slow` answers only when this is called, so a test holds a request in flight as long as it likes. */
  releaseSlow(): void;
  close(): Promise<void>;
}

/**
 * Routes: `/hello` → "hello"; `/echo` → the request body; `/bytes/<n>` → n bytes; `/slow` → headers
 * at once, the body after `releaseSlow()`.
 */
export async function startOrigin(): Promise<Origin> {
  const seen: Origin["seen"] = [];
  let waiting: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const url = req.url ?? "/";
      seen.push({ method: req.method ?? "?", url, headers: req.headers, body: body.toString("utf8") });
      if (url === "/echo") {
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
        res.end(body);
      } else if (url.startsWith("/bytes/")) {
        const size = Number(url.slice("/bytes/".length));
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": size });
        res.end(Buffer.alloc(size, 120));
      } else if (url === "/slow") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("started;");
        waiting.push(() => res.end("finished"));
      } else {
        res.writeHead(200, { "content-type": "text/plain", "content-length": 5 });
        res.end("hello");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    releaseSlow: () => {
      for (const release of waiting) release();
      waiting = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface GatewayFixture {
  server: ReferenceServer;
  api: ProxyClient;
  origin: Origin;
  /** Every line the server logged, API and gateway. */
  logLines: string[];
  /** A proxy user created through the API, and its password from the create answer. */
  user: { id: string; username: string; password: string };
  close(): Promise<void>;
}

export async function gatewayFixture(
  options: ReferenceServerOptions = {},
  limits?: { daily_gb?: number | null; monthly_gb?: number | null },
): Promise<GatewayFixture> {
  const logLines: string[] = [];
  const server = await startReferenceServer({
    rateLimitPerMinute: 100_000,
    log: (line) => logLines.push(line),
    ...options,
    gateway: { propagationDelayMs: 0, ...options.gateway },
  });
  const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, maxRetries: 0 });
  const created = await api.proxyUsers.create({ name: "scraper", ...(limits ? { limits } : {}) });
  const origin = await startOrigin();
  return {
    server,
    api,
    origin,
    logLines,
    user: { id: created.id, username: created.username, password: created.password },
    close: async () => {
      await origin.close();
      await server.close();
    },
  };
}

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}

export interface ProxiedAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One absolute-form request through the gateway with undici, returning whatever the gateway answered
 * (undici's ProxyAgent turns a 407 into an error, which would hide `x-proxy-error`).
 */
export async function viaGateway(
  gatewayUrl: string,
  targetUrl: string,
  proxyAuthorization: string | undefined,
  init: { method?: string; body?: string | Buffer } = {},
): Promise<ProxiedAnswer> {
  const client = new Client(gatewayUrl);
  try {
    const answer = await client.request({
      method: (init.method ?? "GET") as "GET",
      path: targetUrl,
      headers: {
        host: URL.canParse(targetUrl) ? new URL(targetUrl).host : "gateway",
        ...(proxyAuthorization ? { "proxy-authorization": proxyAuthorization } : {}),
      },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const headers = Object.fromEntries(
      Object.entries(answer.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(", ") : String(value),
      ]),
    );
    return { status: answer.statusCode, headers, body: await answer.body.text() };
  } finally {
    await client.close();
  }
}

/**
 * Raw bytes over one TCP connection to the gateway: writes each request in turn, waiting for each answer
 * (`answerEnds` says when one is complete), and returns exactly what was written and read.
 */
export async function rawSession(
  gatewayUrl: string,
  requests: Buffer[],
  answerComplete: (received: Buffer, index: number) => boolean,
): Promise<{ written: number; read: number; answers: Buffer[] }> {
  const { hostname, port } = new URL(gatewayUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  let buffered = Buffer.alloc(0);
  let read = 0;
  let written = 0;
  const answers: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    read += chunk.length;
  });
  for (const [index, request] of requests.entries()) {
    socket.write(request);
    written += request.length;
    while (!answerComplete(buffered, index)) {
      if (socket.destroyed || socket.readableEnded) throw new Error(`connection ended before answer ${index}`);
      await new Promise<void>((resolve) => {
        const done = (): void => {
          socket.off("data", done);
          socket.off("close", done);
          resolve();
        };
        socket.once("data", done);
        socket.once("close", done);
      });
    }
    answers.push(buffered);
    buffered = Buffer.alloc(0);
  }
  socket.end();
  await new Promise((resolve) => socket.once("close", resolve));
  return { written, read, answers };
}

/** The length of the first answer in `received` (head and content-length body), or undefined while it is incomplete. */
export function firstAnswerLength(received: Buffer): number | undefined {
  const end = received.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const head = received.subarray(0, end).toString("latin1");
  const length = end + 4 + Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
  return received.length >= length ? length : undefined;
}

/** An HTTP/1.1 answer with a content-length is complete once its head and that many body bytes are in. */
export function hasCompleteAnswer(received: Buffer): boolean {
  return firstAnswerLength(received) !== undefined;
}

/** Writes all `requests` at once on one connection (pipelined) and returns every answer, once the gateway closes it. */
export async function pipelined(gatewayUrl: string, requests: Buffer[]): Promise<Buffer[]> {
  const { hostname, port } = new URL(gatewayUrl);
  const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(Buffer.concat(requests)));
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  await new Promise((resolve) => socket.once("close", resolve));
  let rest = Buffer.concat(chunks);
  const answers: Buffer[] = [];
  for (let length = firstAnswerLength(rest); length !== undefined; length = firstAnswerLength(rest)) {
    answers.push(rest.subarray(0, length));
    rest = rest.subarray(length);
  }
  return answers;
}

/** A raw request line and head, in absolute form, with `Proxy-Authorization` when given. */
export function absoluteRequest(method: string, targetUrl: string, auth: string | undefined, extra = ""): string {
  const credentials = auth ? `Proxy-Authorization: ${auth}\r\n` : "";
  return `${method} ${targetUrl} HTTP/1.1\r\nHost: ${new URL(targetUrl).host}\r\n${credentials}${extra}\r\n`;
}

export function statusOf(answer: Buffer): number {
  return Number(answer.subarray(9, 12).toString("latin1"));
}

/** Usage of one proxy user (the fixture's by default) today, as the API reports it. */
export async function usageToday(
  fixture: GatewayFixture,
  proxyUserId = fixture.user.id,
): Promise<{ bytes: number; requests: number }> {
  const today = new Date(fixture.server.clock.now()).toISOString().slice(0, 10);
  const report = await fixture.api.usage.get({ from: today, to: today, proxy_user_id: proxyUserId });
  return report.totals;
}
