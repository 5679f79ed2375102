#!/usr/bin/env node
import { parseArgs } from "node:util";
import type { FaultOptions } from "./faults";
import { type ReferenceServerOptions, startReferenceServer } from "./server";

const USAGE = `usage: node dist/server/cli.js [options]

  --host <host>              listen address (default 127.0.0.1)
  --port <port>              listen port (default 8787; 0 = any free port)
  --root-key <secret>        root key secret, live_<32+ base62> (default: generated, printed)
  --rate-limit <n>           requests per minute per API key (default 600)
  --balance <cents>          starting balance (default 10000)
  --state-file <path>        keep state across restarts in this JSON file
  --fault-rate <0..1>        chance of a 500/503 before any state change
  --drop-rate <0..1>         chance of a dropped connection before any state change
  --after-commit-rate <0..1> chance that a write commits and its reply is then lost
  --latency-ms <ms>          added latency, on every request or per --latency-rate
  --latency-rate <0..1>      chance of the added latency
  --fault-seed <n>           make the random faults reproducible
  --log                      one line per request on stderr (never a secret)
  --help                     this text`;

function numberFlag(values: Record<string, unknown>, name: string, check: (n: number) => boolean): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !check(value))
    throw new Error(`--${name}: invalid value ${String(raw)}`);
  return value;
}

const isRate = (n: number): boolean => n >= 0 && n <= 1;
const isCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;

export function parseCli(argv: string[]): ReferenceServerOptions | "help" {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "root-key": { type: "string" },
      "rate-limit": { type: "string" },
      balance: { type: "string" },
      "state-file": { type: "string" },
      "fault-rate": { type: "string" },
      "drop-rate": { type: "string" },
      "after-commit-rate": { type: "string" },
      "latency-ms": { type: "string" },
      "latency-rate": { type: "string" },
      "fault-seed": { type: "string" },
      log: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return "help";
  const faults: FaultOptions = {};
  const setFault = <K extends keyof FaultOptions>(key: K, value: FaultOptions[K] | undefined): void => {
    if (value !== undefined) faults[key] = value;
  };
  setFault("errorRate", numberFlag(values, "fault-rate", isRate));
  setFault("dropRate", numberFlag(values, "drop-rate", isRate));
  setFault("afterCommitRate", numberFlag(values, "after-commit-rate", isRate));
  setFault("latencyMs", numberFlag(values, "latency-ms", isCount));
  setFault("latencyRate", numberFlag(values, "latency-rate", isRate));
  setFault("seed", numberFlag(values, "fault-seed", isCount));
  const options: ReferenceServerOptions = {
    host: values.host ?? "127.0.0.1",
    port: numberFlag(values, "port", (n) => isCount(n) && n <= 65535) ?? 8787,
    faults,
  };
  if (values["root-key"] !== undefined) options.rootKey = values["root-key"];
  const rateLimit = numberFlag(values, "rate-limit", (n) => isCount(n) && n >= 1);
  if (rateLimit !== undefined) options.rateLimitPerMinute = rateLimit;
  const balance = numberFlag(values, "balance", Number.isSafeInteger);
  if (balance !== undefined) options.balanceCents = balance;
  if (values["state-file"] !== undefined) options.stateFile = values["state-file"];
  if (values.log) options.log = (line) => process.stderr.write(`${line}\n`);
  return options;
}

async function main(): Promise<void> {
  let options: ReferenceServerOptions | "help";
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    process.exit(2);
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const server = await startReferenceServer(options);
  process.stdout.write(`reference server listening on ${server.url}\nroot key: ${server.rootKey}\n`);
  const stop = (signal: string): void => {
    process.stderr.write(`${signal}: stopping\n`);
    void server.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
