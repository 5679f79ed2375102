#!/usr/bin/env node
import { parseArgs } from "node:util";
import type { FaultOptions } from "./faults";
import type { GatewayOptions } from "./gateway/gateway";
import { type ReferenceServerOptions, startReferenceServer } from "./server";

const USAGE = `usage: pulumi-proxy server [options]     (in a clone of the repository: npm run server -- [options])

  --host <host>              listen address (default 127.0.0.1)
  --port <port>              listen port (default 8787; 0 = any free port)
  --root-key <secret>        root key secret, live_<32+ base62> (default: generated, printed)
  --rate-limit <n>           requests per minute per API key (default 600)
  --failed-auth-per-minute <n>
                             failed authentications per minute per client address before 429 (default 100)
  --header-timeout-ms <ms>   close an API connection whose request headers are not in within this long (default 10000)
  --balance <cents>          starting balance (default 10000)
  --state-file <path>        keep state across restarts in this JSON file
  --fault-rate <0..1>        chance of a 500/503 before any state change
  --drop-rate <0..1>         chance of a dropped connection before any state change
  --after-commit-rate <0..1> chance that a write commits and its reply is then lost
  --latency-ms <ms>          added latency, on every request or per --latency-rate
  --latency-rate <0..1>      chance of the added latency
  --fault-seed <n>           make the random faults reproducible
  --gateway-port <port>      proxy gateway port (default: --port + 1; 0 = any free port, the default with --port 0)
  --propagation-delay-ms <ms> how long an enable, limit or delete takes to reach the gateway (default 2000)
  --gateway-rate-limit <n>   new gateway requests per second per proxy user (default 100)
  --gateway-allow-host <h>   also forward to this host besides loopback (repeatable)
  --gateway-failed-logins-per-pair <n>
                             failed logins per minute per username from one address before 429 (default 20)
  --gateway-failed-logins-per-user <n>
                             failed logins per minute per username, all addresses, before 429 (default 100)
  --gateway-failed-logins-per-address <n>
                             failed logins per minute per client address before 429 (default 200)
  --gateway-max-open <n>     requests and tunnels one proxy user may have open at once (default 1000)
  --gateway-tunnel-idle-ms <ms>
                             close a tunnel that carried nothing for this long (default 300000)
  --gateway-header-timeout-ms <ms>
                             close a connection whose request headers are not in within this long (default 10000)
  --gateway-max-unauthenticated <n>
                             connections without an admitted request one client address may hold (default 1000)
  --no-console               no live console at / of the API port (it is on by default, on a loopback host only)
  --log                      one line per request on stderr (never a secret)
  --help                     this text`;

/** What a flag takes: the check, and its words for the error. */
interface Bound {
  check: (n: number) => boolean;
  expected: string;
}

function numberFlag(values: Record<string, unknown>, name: string, bound: Bound): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !bound.check(value))
    throw new Error(`--${name}: invalid value ${String(raw)}; expected ${bound.expected}`);
  return value;
}

const isCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
const RATE: Bound = { check: (n) => n >= 0 && n <= 1, expected: "a number from 0 to 1" };
const COUNT: Bound = { check: isCount, expected: "a whole number, 0 or more" };
const POSITIVE: Bound = { check: (n) => isCount(n) && n >= 1, expected: "a whole number, 1 or more" };
const PORT: Bound = { check: (n) => isCount(n) && n <= 65535, expected: "a port, 0 to 65535" };
const CENTS: Bound = { check: Number.isSafeInteger, expected: "a whole number of cents" };

export function parseCli(argv: string[]): ReferenceServerOptions | "help" {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "root-key": { type: "string" },
      "rate-limit": { type: "string" },
      "failed-auth-per-minute": { type: "string" },
      "header-timeout-ms": { type: "string" },
      balance: { type: "string" },
      "state-file": { type: "string" },
      "fault-rate": { type: "string" },
      "drop-rate": { type: "string" },
      "after-commit-rate": { type: "string" },
      "latency-ms": { type: "string" },
      "latency-rate": { type: "string" },
      "fault-seed": { type: "string" },
      "gateway-port": { type: "string" },
      "propagation-delay-ms": { type: "string" },
      "gateway-rate-limit": { type: "string" },
      "gateway-allow-host": { type: "string", multiple: true },
      "gateway-failed-logins-per-pair": { type: "string" },
      "gateway-failed-logins-per-user": { type: "string" },
      "gateway-failed-logins-per-address": { type: "string" },
      "gateway-max-open": { type: "string" },
      "gateway-tunnel-idle-ms": { type: "string" },
      "gateway-header-timeout-ms": { type: "string" },
      "gateway-max-unauthenticated": { type: "string" },
      log: { type: "boolean" },
      "no-console": { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return "help";
  const faults: FaultOptions = {};
  const setFault = <K extends keyof FaultOptions>(key: K, value: FaultOptions[K] | undefined): void => {
    if (value !== undefined) faults[key] = value;
  };
  setFault("errorRate", numberFlag(values, "fault-rate", RATE));
  setFault("dropRate", numberFlag(values, "drop-rate", RATE));
  setFault("afterCommitRate", numberFlag(values, "after-commit-rate", RATE));
  setFault("latencyMs", numberFlag(values, "latency-ms", COUNT));
  setFault("latencyRate", numberFlag(values, "latency-rate", RATE));
  setFault("seed", numberFlag(values, "fault-seed", COUNT));
  const options: ReferenceServerOptions = {
    host: values.host ?? "127.0.0.1",
    port: numberFlag(values, "port", PORT) ?? 8787,
    faults,
  };
  if (values["root-key"] !== undefined) options.rootKey = values["root-key"];
  const rateLimit = numberFlag(values, "rate-limit", POSITIVE);
  if (rateLimit !== undefined) options.rateLimitPerMinute = rateLimit;
  const failedAuth = numberFlag(values, "failed-auth-per-minute", POSITIVE);
  if (failedAuth !== undefined) options.failedAuthPerMinute = failedAuth;
  const headerTimeout = numberFlag(values, "header-timeout-ms", POSITIVE);
  if (headerTimeout !== undefined) options.headerTimeoutMs = headerTimeout;
  const balance = numberFlag(values, "balance", CENTS);
  if (balance !== undefined) options.balanceCents = balance;
  if (values["state-file"] !== undefined) options.stateFile = values["state-file"];
  options.gateway = gatewayOptions(values, options.port ?? 8787);
  if (values["no-console"]) options.console = false;
  if (values.log) options.log = (line) => process.stderr.write(`${line}\n`);
  return options;
}

function gatewayOptions(values: Record<string, unknown>, apiPort: number): GatewayOptions {
  const port = numberFlag(values, "gateway-port", PORT);
  // Beside the API by default; with an ephemeral API port, an ephemeral gateway port too, so parallel runs never collide.
  const gateway: GatewayOptions = { port: port ?? (apiPort === 0 || apiPort === 65535 ? 0 : apiPort + 1) };
  const delay = numberFlag(values, "propagation-delay-ms", COUNT);
  if (delay !== undefined) gateway.propagationDelayMs = delay;
  const perSecond = numberFlag(values, "gateway-rate-limit", POSITIVE);
  if (perSecond !== undefined) gateway.requestsPerSecond = perSecond;
  const hosts = values["gateway-allow-host"];
  if (Array.isArray(hosts) && hosts.length > 0) gateway.allowedHosts = hosts.map(String);
  const failedLogins = {
    perPair: numberFlag(values, "gateway-failed-logins-per-pair", POSITIVE),
    perUsername: numberFlag(values, "gateway-failed-logins-per-user", POSITIVE),
    perAddress: numberFlag(values, "gateway-failed-logins-per-address", POSITIVE),
  };
  const given = Object.entries(failedLogins).filter(([, value]) => value !== undefined);
  if (given.length > 0) gateway.failedLogins = Object.fromEntries(given);
  const maxOpen = numberFlag(values, "gateway-max-open", POSITIVE);
  if (maxOpen !== undefined) gateway.maxOpenPerUser = maxOpen;
  const idleMs = numberFlag(values, "gateway-tunnel-idle-ms", POSITIVE);
  if (idleMs !== undefined) gateway.tunnelIdleTimeoutMs = idleMs;
  const headerMs = numberFlag(values, "gateway-header-timeout-ms", POSITIVE);
  if (headerMs !== undefined) gateway.headerTimeoutMs = headerMs;
  const unauthenticated = numberFlag(values, "gateway-max-unauthenticated", POSITIVE);
  if (unauthenticated !== undefined) gateway.maxUnauthenticatedPerAddress = unauthenticated;
  return gateway;
}

/** Parses the flags and serves until SIGINT or SIGTERM; `pulumi-proxy server` and `npm run server` both land here. */
export async function runServerCli(argv: string[]): Promise<void> {
  let options: ReferenceServerOptions | "help";
  try {
    options = parseCli(argv);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    process.exit(2);
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const server = await startReferenceServer(options);
  process.stdout.write(
    `reference server listening on ${server.url}\nroot key: ${server.rootKey}\ngateway listening on ${server.gatewayUrl}\n`,
  );
  if (server.consoleUrl)
    process.stdout.write(`console: ${server.consoleUrl}  (this machine only; --no-console turns it off)\n`);
  const stop = (signal: string): void => {
    process.stderr.write(`${signal}: stopping\n`);
    void server.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (require.main === module) {
  runServerCli(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
