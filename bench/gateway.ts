import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { startInChildProcess } from "./server";

/**
 * The reference gateway under load: requests per second and p99 through it on loopback, metering
 * on, for small answers and for 1 MB bodies each way. The server (API and gateway) runs in its own
 * process, so the gateway has one core; autocannon and the origin share the bench's process.
 * Goal: at least 2 000 small requests a second, so a user's own load test is never limited by it.
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
      { label: "GET, 1 MB answer", method: "GET", path: target("/large") },
      { label: "POST, 1 MB body", method: "POST", path: target("/small"), body: Buffer.alloc(MEGABYTE, 7) },
    ];
    let answered = 0;
    for (const { label, method, path, body } of cases) {
      const cpuBefore = cpuSeconds(server.pid);
      const result = await autocannon({
        url: server.gatewayUrl,
        connections: CONNECTIONS,
        duration: DURATION_SECONDS,
        // autocannon sets content-length itself.
        requests: [{ method, path, headers, ...(body ? { body } : {}) }],
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
  } finally {
    origin.close();
    await server.stop();
  }
}

if (require.main === module) {
  benchGateway().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
