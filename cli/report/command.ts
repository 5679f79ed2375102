import fs from "node:fs";
import path from "node:path";
import type { Deployment, Stack } from "@pulumi/pulumi/automation";
import { CalendarDate } from "../../contract/common";
import { apiSettings, clientFor } from "../../provider/core/settings";
import type { ProxyClient } from "../../sdk";
import { type CliCommand, usageLines } from "../command";
import {
  ENVIRONMENT_USAGE,
  openTargetStack,
  parseStackFlags,
  runSubcommand,
  STACK_USAGE,
  type StackTarget,
  stackSettings,
  stackTarget,
  UsageError,
} from "../stack";
import { collectAccount } from "./collect";
import { renderHtml } from "./html";
import { renderMarkdown } from "./markdown";
import { buildReport, type Report, ROTATE_EVERY_DAYS_DEFAULT } from "./model";
import { stackFacts } from "./stackFacts";

const SYNOPSIS = [
  `pulumi-proxy report [--out <file>] [--markdown | --json] [--as-of <YYYY-MM-DD>] [--rotate-every <days>]
                           [--stack <name> [--cwd <dir>] [--pulumi-root <dir>]]`,
];

const USAGE = `${usageLines(SYNOPSIS)}

Reads an account (read-only) and writes one self-contained HTML page: every proxy user's traffic per
day against its daily ceiling and cumulative against its monthly one, projected to month end at the
pace of the last 7 days, users that will reach a ceiling first with the date; this month's charges
by kind and the balance; the API keys with their scopes, age, expiry and rotation due dates. With
--stack: what the stack manages of the account, per kind, and its drift. Prints the file's path.

The API is PROXY_API_URL with the key in PROXY_API_KEY (never a flag: a command line is visible to
every process), or with --stack the stack's proxy:apiUrl and proxy:apiKey. The key needs usage:read
and proxy-users:read; keys:write for the keys and billing:read for spend, or those parts say they
could not be read. Requests: ⌈N/200⌉ list requests per collection, one usage read, one balance read.

  --out <file>         where the HTML goes (default proxy-report-<as-of>.html)
  --markdown           write Markdown tables (for a PR or an issue) to stdout, or to --out
  --json               write the report as JSON ("version": 1) to stdout, or to --out
  --as-of <date>       the UTC day the report is made on (default today)
  --rotate-every <n>   days after which a key not rotated by a stack is due (default ${ROTATE_EVERY_DAYS_DEFAULT})
  --api-url <url>      the API, instead of PROXY_API_URL
${STACK_USAGE.replace("(required)", "(optional: adds coverage and drift)")}
  --help               this text

${ENVIRONMENT_USAGE}`;

export interface ReportArgs extends StackTarget {
  /** Empty without --stack. */
  stack: string;
  format: "html" | "markdown" | "json";
  out?: string;
  asOf: string;
  rotateEveryDays: number;
  apiUrl?: string;
}

export function parseReportArgs(argv: string[]): ReportArgs | "help" {
  const values = parseStackFlags(argv, {
    out: { type: "string" },
    markdown: { type: "boolean" },
    json: { type: "boolean" },
    "as-of": { type: "string" },
    "rotate-every": { type: "string" },
    "api-url": { type: "string" },
  });
  if (values.help) return "help";
  if (values.markdown && values.json) throw new UsageError("--markdown and --json are two formats: pick one");
  const asOf = values["as-of"] ?? new Date().toISOString().slice(0, 10);
  if (!CalendarDate.safeParse(asOf).success)
    throw new UsageError(`--as-of must be a date like 2030-01-31, got ${asOf}`);
  const rotate = values["rotate-every"] ?? String(ROTATE_EVERY_DAYS_DEFAULT);
  if (!/^\d+$/.test(rotate) || Number(rotate) < 1)
    throw new UsageError(`--rotate-every must be a whole number of days, 1 or more, got ${rotate}`);
  if (values.out === "") throw new UsageError("--out needs a file name, e.g. --out report.html");
  const target = values.stack !== undefined ? stackTarget(values) : { stack: "", cwd: process.cwd() };
  return {
    ...target,
    format: values.json ? "json" : values.markdown ? "markdown" : "html",
    asOf,
    rotateEveryDays: Number(rotate),
    ...(values.out !== undefined ? { out: values.out } : {}),
    ...(values["api-url"] !== undefined ? { apiUrl: values["api-url"] } : {}),
  };
}

/** Now, or the end of an earlier day the report is made as of: keys' ages and due dates count to it. */
function reportTime(asOf: string): number {
  const now = Date.now();
  return new Date(now).toISOString().slice(0, 10) === asOf ? now : Date.parse(`${asOf}T23:59:59.999Z`);
}

/** The stack a report covers, and whether to run the drift check (a `preview --refresh`). */
export interface ReportStack {
  name: string;
  stack: Stack;
  deployment: Deployment;
  /** The last four characters of the key the stack's provider uses: that key is not counted. */
  credentialHint: string;
  checkDrift: boolean;
}

/** Reads the account (and the stack) and builds the report; the demo calls this too. */
export async function reportOf(
  client: ProxyClient,
  asOf: string,
  options: { rotateEveryDays?: number; stack?: ReportStack } = {},
): Promise<Report> {
  const { stack } = options;
  const data = await collectAccount(client, asOf, { ips: stack !== undefined });
  const facts = stack
    ? await stackFacts(stack.name, stack.stack, stack.deployment, client, data, stack.credentialHint, stack.checkDrift)
    : undefined;
  // A URL may carry credentials (https://user:pass@host); the report names the host only.
  const apiUrl = new URL(client.baseUrl);
  apiUrl.username = "";
  apiUrl.password = "";
  return buildReport(data, {
    apiUrl: apiUrl.toString().replace(/\/$/, ""),
    nowMs: reportTime(asOf),
    rotateEveryDays: options.rotateEveryDays ?? ROTATE_EVERY_DAYS_DEFAULT,
    ...(facts ? { stack: facts } : {}),
  });
}

export async function runReport(args: ReportArgs): Promise<number> {
  const stack = args.stack ? await openTargetStack(args) : undefined;
  const [config, deployment] = stack ? await Promise.all([stack.getAllConfig(), stack.exportStack()]) : [];
  const settings = config
    ? stackSettings(config)
    : apiSettings((key) => (key === "proxy:apiUrl" ? args.apiUrl : undefined));
  const client = clientFor(settings, "pulumi-proxy-report");
  const report = await reportOf(client, args.asOf, {
    rotateEveryDays: args.rotateEveryDays,
    ...(stack && deployment
      ? {
          stack: { name: args.stack, stack, deployment, credentialHint: settings.apiKey.slice(-4), checkDrift: true },
        }
      : {}),
  });
  const text =
    args.format === "json"
      ? `${JSON.stringify(report, null, 2)}\n`
      : args.format === "markdown"
        ? renderMarkdown(report)
        : renderHtml(report);
  const out = args.out ?? (args.format === "html" ? `proxy-report-${args.asOf}.html` : undefined);
  if (out === undefined) {
    process.stdout.write(text);
    return 0;
  }
  const file = path.resolve(out);
  fs.writeFileSync(file, text);
  process.stdout.write(`${file}\n`);
  return 0;
}

/** `pulumi-proxy report …` */
export function reportCommand(argv: string[]): Promise<number> {
  return runSubcommand("report", USAGE, argv, parseReportArgs, runReport);
}

export const command: CliCommand = {
  name: "report",
  summary: "usage, ceilings, spend and keys of the account as one HTML page (or Markdown, or JSON)",
  usage: SYNOPSIS,
  run: reportCommand,
};
