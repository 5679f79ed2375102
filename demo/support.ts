/**
 * The pieces of `npm run demo` that are not the story itself: flags, the repository root, progress
 * lines, engine events as one line per resource, and the masked summary.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { shortType } from "../cli/format";
import { textTable } from "../cli/table";

export const USAGE = `usage: npm run demo -- [--keep] [--verbose] [--api-url URL --api-key KEY] [--with-ip]

Runs the repository's stack (Pulumi.yaml → examples/quickstart) end to end: up, a clean preview,
an out-of-band change through the SDK, the drift it causes, up --refresh to converge, a summary;
against the embedded server, traffic through its gateway, the usage it made, and an emergency
disable answered by 407.

  --keep            keep the stack afterwards (default: destroy it, so the next run starts fresh)
  --verbose         stream the engine's own output
  --api-url URL     use this API instead of the embedded reference server
  --api-key KEY     its key (or set PROXY_API_KEY, which keeps it out of shell history)
  --with-ip         with --api-url: also allocate an IP address, which the API charges for
  --help            this text`;

export interface DemoArgs {
  keep: boolean;
  verbose: boolean;
  withIp: boolean;
  api?: { url: string; key: string };
}

export class DemoError extends Error {}

export function parseDemoArgs(argv: string[]): DemoArgs | "help" {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      keep: { type: "boolean" },
      verbose: { type: "boolean" },
      "with-ip": { type: "boolean" },
      "api-url": { type: "string" },
      "api-key": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const key = values["api-key"] ?? process.env.PROXY_API_KEY;
  const url = values["api-url"];
  if (url === undefined && values["api-key"] !== undefined) throw new DemoError("--api-key needs --api-url");
  if (url !== undefined && !key) throw new DemoError("--api-url needs --api-key (or PROXY_API_KEY)");
  if (url !== undefined && !/^https?:\/\/[^/]+/.test(url))
    throw new DemoError(`--api-url must be an http(s) URL, got ${url}`);
  return {
    keep: values.keep === true,
    verbose: values.verbose === true,
    withIp: values["with-ip"] === true,
    ...(url !== undefined && key ? { api: { url: url.replace(/\/+$/, ""), key } } : {}),
  };
}

/** Compiled into dist/demo, run from anywhere: the root is the nearest folder whose package is pulumi-proxy. */
export function findRepoRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, "utf8")).name === "pulumi-proxy") return dir;
    if (path.dirname(dir) === dir) throw new DemoError(`no pulumi-proxy package.json above ${from}`);
  }
}

export const say = (line = ""): void => void process.stdout.write(`${line}\n`);
export const indent = (text: string, by = "      "): string =>
  text
    .split("\n")
    .map((line) => (line ? by + line : line))
    .join("\n");
export const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** Seven steps on any API (the last is the report); two more (gateway traffic, emergency disable) against the embedded server. */
let totalSteps = 7;
export function setTotalSteps(total: number): void {
  totalSteps = total;
}

let stepNumber = 0;
export function step(title: string): number {
  stepNumber += 1;
  say(`\n[${stepNumber}/${totalSteps}] ${title}`);
  return Date.now();
}

const SYMBOLS: Record<string, string> = {
  create: "+",
  update: "~",
  delete: "-",
  replace: "±",
  "create-replacement": "±",
  refresh: "↻",
};

/**
 * The resources one engine run touched, by operation, without the stack itself: the summary line
 * counts exactly what is listed. Unless `quiet` (the engine's own output is shown instead), it prints
 * one line per resource.
 */
export class ResourceTally {
  readonly #counts = new Map<string, number>();
  constructor(private readonly quiet = false) {}

  readonly onEvent = (event: EngineEvent): void => {
    const meta = event.resOutputsEvent?.metadata;
    if (!meta || meta.type.startsWith("pulumi:") || !(meta.op in SYMBOLS) || meta.op === "refresh") return;
    this.#counts.set(meta.op, (this.#counts.get(meta.op) ?? 0) + 1);
    const name = meta.urn.split("::").pop() ?? meta.urn;
    if (!this.quiet) say(`      ${SYMBOLS[meta.op]} ${name} (${shortType(meta.type)}) ${PAST[meta.op] ?? meta.op}`);
  };

  count(op: string): number {
    return this.#counts.get(op) ?? 0;
  }
}

const PAST: Record<string, string> = {
  create: "created",
  update: "updated",
  delete: "deleted",
  replace: "replaced",
  "create-replacement": "replaced",
};

/** Secrets never print: four bullets and the last four characters, like the API's secret_hint. */
export function mask(secret: unknown): string {
  return typeof secret === "string" && secret.length > 4 ? `••••${secret.slice(-4)}` : "(not available)";
}

export interface QuickstartOutputs {
  proxyUser?: {
    id: string;
    username: string;
    limits: { dailyGb: number | null; monthlyGb: number | null };
    enabled: boolean;
  };
  proxyUserPassword?: string;
  apiKey?: { id: string; name: string; scopes: string[]; secretHint: string };
  ip?: { id: string; ip: string; city: string; asn: string; health: string };
}

const gb = (value: number | null | undefined) => (value == null ? "no ceiling" : `${value} GB`);

export function summaryLines(out: QuickstartOutputs): string[] {
  const rows: string[][] = [];
  if (out.proxyUser) {
    const { id, username, limits, enabled } = out.proxyUser;
    rows.push([
      "ProxyUser",
      username,
      id,
      `${gb(limits.dailyGb)}/day, ${gb(limits.monthlyGb)}/month, ${enabled ? "enabled" : "disabled"}, password ${mask(out.proxyUserPassword)}`,
    ]);
  }
  if (out.apiKey) {
    const { id, name, scopes, secretHint } = out.apiKey;
    rows.push(["ApiKey", name, id, `scopes ${scopes.join(", ")}, secret ••••${secretHint}`]);
  }
  if (out.ip)
    rows.push(["IpAllocation", out.ip.ip, out.ip.id, `${out.ip.city} (${out.ip.asn}), health ${out.ip.health}`]);
  return textTable(rows);
}
