import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { join } from "node:path";
import { startReferenceServer } from "../server";
import { startInChildProcess, type Target } from "./server";

/**
 * The reference gateway under load: requests per second and p99 through it on loopback, metering
 * on, for small answers and for 1 MB bodies each way. The server (API and gateway) runs in its own
 * process, so the gateway has one core; autocannon and the origin share the bench's process.
 * Goal: at least 2 000 small requests a second, so a user's own load test is never limited by it.
 * Then 300 open tunnels (usage seen while they are open, a small load beside them), the server's RSS
 * after a flood of wrong passwords, its descriptors and RSS with 1 000 refused CONNECTs held open,
 * and how long an unknown user and a wrong password take to refuse.
 */

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  throughput: { average: number };
  "2xx": number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: { method: string; path: string; headers: Record<string, string>; body?: Buffer }[];
}) => Promise<AutocannonResult>;

// autocannon ships no types; this is the slice of its API used here.
const autocannon = require("autocannon") as Autocannon;

const CONNECTIONS = 10;
const DURATION_SECONDS = 5;
const MEGABYTE = 1_000_000;

/** CPU seconds (user + system) a process has used, from /proc; undefined where there is no /proc. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

async function startOrigin(): Promise<{ port: number; close(): void }> {
  const small = Buffer.from("hello");
  const large = Buffer.alloc(MEGABYTE, 120);
  const origin = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const body = req.url === "/large" ? large : small;
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
  return { port: (origin.address() as AddressInfo).port, close: () => origin.close() };
}

export async function benchGateway(): Promise<void> {
  const cliPath = join(__dirname, "..", "server", "cli.js");
  const server = await startInChildProcess(cliPath, [
    "--gateway-rate-limit",
    "1000000000",
    "--propagation-delay-ms",
    "0",
  ]);
  const origin = await startOrigin();
  try {
    const api = { authorization: `Bearer ${server.rootKey}`, "content-type": "application/json" };
    const created = await fetch(`${server.url}/v1/proxy-users`, {
      method: "POST",
      headers: api,
      body: JSON.stringify({ name: "bench-gateway" }),
    });
    if (created.status !== 201) throw new Error(`could not create the benchmark proxy user: ${created.status}`);
    const user = (await created.json()) as { id: string; username: string; password: string };
    const headers = {
      host: `127.0.0.1:${origin.port}`,
      "proxy-authorization": `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`,
    };
    const target = (path: string) => `http://127.0.0.1:${origin.port}${path}`;
    process.stdout.write(
      `gateway (server in its own process, metering on), ${CONNECTIONS} connections, ${DURATION_SECONDS} s each\n`,
    );
    const cases = [
      { label: "GET, 5-byte answer", method: "GET", path: target("/small") },
      // curl in a loop: a new connection, and so a new login, for every request.
      { label: "GET, 5 B, conn each", method: "GET", path: target("/small"), close: true },
      { label: "GET, 1 MB answer", method: "GET", path: target("/large") },
      { label: "POST, 1 MB body", method: "POST", path: target("/small"), body: Buffer.alloc(MEGABYTE, 7) },
    ];
    let answered = 0;
    for (const { label, method, path, body, close } of cases) {
      const cpuBefore = cpuSeconds(server.pid);
      const result = await autocannon({
        url: server.gatewayUrl,
        connections: CONNECTIONS,
        duration: DURATION_SECONDS,
        // autocannon sets content-length itself.
        requests: [
          { method, path, headers: close ? { ...headers, connection: "close" } : headers, ...(body ? { body } : {}) },
        ],
      });
      const cpuAfter = cpuSeconds(server.pid);
      answered += result["2xx"];
      const failures = result.non2xx + result.errors + result.timeouts;
      const mbPerSecond = (result.throughput.average / 1e6).toFixed(1);
      // On a shared machine the wall-clock rate depends on the neighbours; answers per CPU-second of
      // the server's process is what one core of its own sustains.
      const perCpuSecond =
        cpuBefore !== undefined && cpuAfter !== undefined && cpuAfter > cpuBefore
          ? `${Math.round(result["2xx"] / (cpuAfter - cpuBefore))}/server CPU-s`
          : "";
      process.stdout.write(
        `${label.padEnd(20)} ${Math.round(result.requests.average).toString().padStart(6)} req/s (${perCpuSecond})   p50 ${result.latency.p50} ms   p99 ${result.latency.p99} ms   ${mbPerSecond} MB/s read   failures ${failures}\n`,
      );
    }
    const today = new Date().toISOString().slice(0, 10);
    const usage = (await (
      await fetch(`${server.url}/v1/usage?from=${today}&to=${today}&proxy_user_id=${user.id}`, { headers: api })
    ).json()) as { totals: { requests: number; bytes: number } };
    process.stdout.write(
      `metered: ${usage.totals.requests} requests (autocannon counted ${answered} answers; it drops those in flight at the end), ${(usage.totals.bytes / 1e9).toFixed(2)} GB\n`,
    );
    await openTunnels(server, origin.port, headers["proxy-authorization"], user.id);
    await wrongPasswordFlood(server, origin.port, user.username);
    await heldRefusedConnects(server, origin.port);
  } finally {
    origin.close();
    await server.stop();
  }
  await benchAuthTiming();
}

const TUNNELS = 300;
/** Failed logins are not limited in the timing case, so every attempt reaches the password check. */
const UNLIMITED_FAILURES = { failedLogins: { perPair: 1e9, perUsername: 1e9, perAddress: 1e9 } };

function rssMegabytes(pid: number | undefined): string {
  if (pid === undefined) return "?";
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return kb === undefined ? "?" : (Number(kb) / 1024).toFixed(0);
}

/** One raw request on a new connection; resolves with the answer's status once its head is in. */
function rawStatus(gatewayUrl: string, request: string): Promise<number> {
  const { hostname, port } = new URL(gatewayUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(request));
    let head = "";
    socket.on("data", (chunk: Buffer) => {
      head += chunk.toString("latin1");
      if (head.includes("\r\n\r\n")) {
        socket.destroy();
        resolve(Number(head.slice(9, 12)));
      }
    });
    socket.once("error", reject);
  });
}

async function usageBytes(server: Target, userId: string): Promise<number> {
  const today = new Date().toISOString().slice(0, 10);
  const answer = await fetch(`${server.url}/v1/usage?from=${today}&to=${today}&proxy_user_id=${userId}`, {
    headers: { authorization: `Bearer ${server.rootKey}` },
  });
  return ((await answer.json()) as { totals: { bytes: number } }).totals.bytes;
}

/** 300 CONNECT tunnels held open, each fetching a small answer every 200 ms, with a small load beside them. */
async function openTunnels(server: Target, originPort: number, auth: string, userId: string): Promise<void> {
  const { hostname, port } = new URL(server.gatewayUrl);
  const opening = performance.now();
  const tunnels = await Promise.all(
    Array.from(
      { length: TUNNELS },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect({ host: hostname, port: Number(port) }, () =>
            socket.write(
              `CONNECT 127.0.0.1:${originPort} HTTP/1.1\r\nHost: 127.0.0.1:${originPort}\r\nProxy-Authorization: ${auth}\r\n\r\n`,
            ),
          );
          socket.once("data", (chunk: Buffer) =>
            chunk.subarray(9, 12).toString() === "200" ? resolve(socket) : reject(new Error("tunnel refused")),
          );
          socket.once("error", reject);
        }),
    ),
  );
  const openedMs = performance.now() - opening;
  const before = await usageBytes(server, userId);
  const ticker = setInterval(() => {
    for (const socket of tunnels) socket.write(`GET /small HTTP/1.1\r\nHost: 127.0.0.1:${originPort}\r\n\r\n`);
  }, 200);
  const beside = await autocannon({
    url: server.gatewayUrl,
    connections: CONNECTIONS,
    duration: 3,
    requests: [
      {
        method: "GET",
        path: `http://127.0.0.1:${originPort}/small`,
        headers: { host: `127.0.0.1:${originPort}`, "proxy-authorization": auth },
      },
    ],
  });
  clearInterval(ticker);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const whileOpen = (await usageBytes(server, userId)) - before;
  const rss = rssMegabytes(server.pid);
  for (const socket of tunnels) socket.destroy();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const afterClose = (await usageBytes(server, userId)) - before;
  process.stdout.write(
    `${TUNNELS} tunnels: opened in ${openedMs.toFixed(0)} ms; beside them ${Math.round(beside.requests.average)} req/s p50 ${beside.latency.p50} ms p99 ${beside.latency.p99} ms; usage seen while open ${(whileOpen / 1e6).toFixed(2)} MB, after close ${(afterClose / 1e6).toFixed(2)} MB; server RSS ${rss} MB\n`,
  );
}

const FLOOD = 9000;
const FLOOD_PARALLEL = 20;

/** Wrong passwords, each different and 4 KB long, 20 connections at a time: how fast, what answers, and the RSS after. */
async function wrongPasswordFlood(server: Target, originPort: number, username: string): Promise<void> {
  const rssBefore = rssMegabytes(server.pid);
  const statuses = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < FLOOD) {
      const password = `${next++}-`.padEnd(4096, "x");
      const auth = Buffer.from(`${username}:${password}`).toString("base64");
      const status = await rawStatus(
        server.gatewayUrl,
        `GET http://127.0.0.1:${originPort}/small HTTP/1.1\r\nHost: 127.0.0.1:${originPort}\r\nProxy-Authorization: Basic ${auth}\r\n\r\n`,
      );
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: FLOOD_PARALLEL }, worker));
  const seconds = (performance.now() - started) / 1000;
  const answers = [...statuses].map(([status, count]) => `${count}×${status}`).join(", ");
  process.stdout.write(
    `${FLOOD} wrong passwords (4 KB, each different) in ${seconds.toFixed(1)} s: ${answers}; server RSS ${rssBefore} → ${rssMegabytes(server.pid)} MB\n`,
  );
}

const HELD = 1000;

function descriptorCount(pid: number | undefined): string {
  if (pid === undefined) return "?";
  try {
    return String(readdirSync(`/proc/${pid}/fd`).length);
  } catch {
    return "?";
  }
}

/**
 * 1 000 CONNECTs without credentials whose clients keep their half open after the 407: the server's
 * descriptors and RSS while they are held, and two seconds later (the gateway closes its side of
 * each refusal; the clients still hold theirs).
 */
async function heldRefusedConnects(server: Target, originPort: number): Promise<void> {
  const { hostname, port } = new URL(server.gatewayUrl);
  const before = { fds: descriptorCount(server.pid), rss: rssMegabytes(server.pid) };
  const request = `CONNECT 127.0.0.1:${originPort} HTTP/1.1\r\nHost: 127.0.0.1:${originPort}\r\n\r\n`;
  const held: Socket[] = [];
  await Promise.all(
    Array.from(
      { length: HELD },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true }, () =>
            socket.write(request),
          );
          held.push(socket);
          socket.once("data", () => resolve());
          socket.once("error", () => resolve());
        }),
    ),
  );
  const answered = { fds: descriptorCount(server.pid), rss: rssMegabytes(server.pid) };
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const later = { fds: descriptorCount(server.pid), rss: rssMegabytes(server.pid) };
  const health = await fetch(`${server.url}/v1/proxy-users`, {
    headers: { authorization: `Bearer ${server.rootKey}` },
  });
  for (const socket of held) socket.destroy();
  process.stdout.write(
    `${HELD} refused CONNECTs held open by their clients: server descriptors ${before.fds} → ${answered.fds} once answered → ${later.fds} 2 s later; RSS ${before.rss} → ${answered.rss} → ${later.rss} MB; API answered ${health.status}\n`,
  );
}

/**
 * An unknown user against a wrong password, alternating, each on a new connection, with the server in
 * this process and failed logins not limited: the refusal's latency should not tell them apart.
 */
export async function benchAuthTiming(): Promise<void> {
  const server = await startReferenceServer({
    gateway: { propagationDelayMs: 0, ...UNLIMITED_FAILURES },
  });
  try {
    const created = await fetch(`${server.url}/v1/proxy-users`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.rootKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench-timing" }),
    });
    const { username } = (await created.json()) as { username: string };
    const request = (name: string): string =>
      `GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nProxy-Authorization: Basic ${Buffer.from(`${name}:wrong-password-0123456789`).toString("base64")}\r\n\r\n`;
    const samples: Record<"unknown" | "wrong", number[]> = { unknown: [], wrong: [] };
    for (let i = 0; i < 4000; i++) {
      const kind = i % 2 === 0 ? "unknown" : "wrong";
      const started = process.hrtime.bigint();
      await rawStatus(server.gatewayUrl, request(kind === "unknown" ? `nobody${i}` : username));
      samples[kind].push(Number(process.hrtime.bigint() - started) / 1000);
    }
    const stats = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b).slice(0, Math.floor(values.length * 0.9));
      const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
      const variance = sorted.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (sorted.length - 1);
      return { p50: sorted[Math.floor(values.length / 2)] ?? 0, mean, variance, n: sorted.length };
    };
    const unknown = stats(samples.unknown);
    const wrong = stats(samples.wrong);
    const z = (wrong.mean - unknown.mean) / Math.sqrt(unknown.variance / unknown.n + wrong.variance / wrong.n);
    process.stdout.write(
      `refusal latency (fastest 90 %): unknown user p50 ${unknown.p50.toFixed(0)} µs, wrong password p50 ${wrong.p50.toFixed(0)} µs, z = ${z.toFixed(1)}\n`,
    );
  } finally {
    await server.close();
  }
}

if (require.main === module) {
  benchGateway().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
