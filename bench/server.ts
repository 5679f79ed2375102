import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startReferenceServer } from "../server";

/**
 * Load benchmark of the reference server, so it is known not to be the bottleneck of the SDK and
 * provider tests. The server runs in its own process (its own core) unless told otherwise, so the
 * load generator does not steal its event loop.
 */

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
  requests: AutocannonRequest[];
}) => Promise<AutocannonResult>;

// autocannon ships no types; this is the slice of its API used here.
export const autocannon = require("autocannon") as Autocannon;

const RATE_LIMIT = 1_000_000_000;
const CONNECTIONS = 10;
const DURATION_SECONDS = 5;

export interface Target {
  /** The server's process, when it has its own. */
  pid?: number;
  url: string;
  gatewayUrl: string;
  rootKey: string;
  stop(): Promise<void>;
}

/** The built command-line server in its own process (its own core), as `npm run server` runs it. */
export async function startInChildProcess(cliPath: string, extraArgs: string[] = []): Promise<Target> {
  const child: ChildProcess = fork(cliPath, ["--port", "0", "--rate-limit", String(RATE_LIMIT), ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => (errors += chunk.toString("utf8")));
  const banner = await new Promise<string>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (/root key: \S+\n/.test(output) && /gateway listening on \S+\n/.test(output)) resolve(output);
    });
    child.once("exit", (code) => reject(new Error(`the server exited early (${String(code)}): ${errors}`)));
  });
  const url = /listening on (\S+)/.exec(banner)?.[1];
  const rootKey = /root key: (\S+)/.exec(banner)?.[1];
  const gatewayUrl = /gateway listening on (\S+)/.exec(banner)?.[1];
  if (!url || !rootKey || !gatewayUrl) throw new Error(`unexpected server banner: ${banner}`);
  return {
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    url,
    gatewayUrl,
    rootKey,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

async function startInProcess(): Promise<Target> {
  const server = await startReferenceServer({ rateLimitPerMinute: RATE_LIMIT });
  return { url: server.url, gatewayUrl: server.gatewayUrl, rootKey: server.rootKey, stop: () => server.close() };
}

function report(label: string, result: AutocannonResult): void {
  const failures = result.non2xx + result.errors + result.timeouts;
  process.stdout.write(
    `${label.padEnd(28)} ${Math.round(result.requests.average).toString().padStart(7)} req/s   p50 ${result.latency.p50} ms   p99 ${result.latency.p99} ms   failures ${failures}\n`,
  );
}

export async function benchServer(options: { inProcess?: boolean } = {}): Promise<void> {
  const cliPath = join(__dirname, "..", "server", "cli.js");
  const useChild = !options.inProcess && existsSync(cliPath);
  const target = useChild ? await startInChildProcess(cliPath) : await startInProcess();
  const headers = { authorization: `Bearer ${target.rootKey}`, "content-type": "application/json" };
  try {
    const created = await fetch(`${target.url}/v1/proxy-users`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "bench-target" }),
    });
    if (created.status !== 201) throw new Error(`could not create the benchmark proxy user: ${created.status}`);
    const { id } = (await created.json()) as { id: string };
    process.stdout.write(
      `reference server (${useChild ? "own process" : "in process"}), ${CONNECTIONS} connections, ${DURATION_SECONDS} s each\n`,
    );

    report(
      "GET /v1/proxy-users/{id}",
      await autocannon({
        url: target.url,
        connections: CONNECTIONS,
        duration: DURATION_SECONDS,
        requests: [{ method: "GET", path: `/v1/proxy-users/${id}`, headers }],
      }),
    );

    let sequence = 0;
    report(
      "POST /v1/proxy-users",
      await autocannon({
        url: target.url,
        connections: CONNECTIONS,
        duration: DURATION_SECONDS,
        requests: [
          {
            method: "POST",
            path: "/v1/proxy-users",
            headers,
            // Names are unique per account, so every request needs its own.
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({ name: `bench-${process.pid}-${++sequence}` }),
            }),
          },
        ],
      }),
    );
  } finally {
    await target.stop();
  }
}

if (require.main === module) {
  benchServer({ inProcess: process.argv.includes("--in-process") }).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
