#!/usr/bin/env node
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { LocalWorkspace, StackNotFoundError } from "@pulumi/pulumi/automation";
import { type DriftReport, detectDrift } from "./drift";
import { locatePulumi } from "./pulumiCli";
import { formatDriftTable } from "./table";

const USAGE = `usage: pulumi-proxy drift --stack <name> [--cwd <dir>] [--json[=<file>]] [--pulumi-root <dir>]

Runs \`pulumi preview --refresh\` on an existing stack and lists what changed outside Pulumi:
resource, property, recorded → actual value, and what the next \`pulumi up\` would do.

  --stack <name>       the stack to check (required)
  --cwd <dir>          the program folder, which holds Pulumi.yaml (default: the current folder)
  --json               write a machine-readable report to stdout; the table goes to stderr
  --json=<file>        write the report to <file>; the table goes to stdout
  --pulumi-root <dir>  use <dir>/bin/pulumi instead of \`pulumi\` on PATH (or set PULUMI_PROXY_CLI_ROOT)
  --help               this text

The backend and secrets come from the usual environment: \`pulumi login\` or PULUMI_BACKEND_URL,
PULUMI_CONFIG_PASSPHRASE or PULUMI_ACCESS_TOKEN.

Exit codes: 0 no drift, 2 drift found, 1 error.`;

export const EXIT = { noDrift: 0, error: 1, drift: 2 } as const;

class UsageError extends Error {}

export interface DriftArgs {
  stack: string;
  cwd: string;
  /** "-" for stdout, else a file path. */
  json?: string;
  pulumiRoot?: string;
}

/** The JSON written by `--json`: the drift report plus what a CI job branches on. */
export interface DriftJson extends DriftReport {
  cwd: string;
  drift: boolean;
  checkedAt: string;
}

/** parseArgs throws plain errors; they are usage mistakes, so they exit 1 with the usage text. */
function parseOrExplain<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export function parseDriftArgs(argv: string[]): DriftArgs | "help" {
  // A bare --json means stdout; parseArgs would otherwise swallow the next argument as its value.
  const args = argv.map((arg) => (arg === "--json" ? "--json=-" : arg));
  const values = parseOrExplain(
    () =>
      parseArgs({
        args,
        strict: true,
        options: {
          stack: { type: "string" },
          cwd: { type: "string" },
          json: { type: "string" },
          "pulumi-root": { type: "string" },
          help: { type: "boolean", short: "h" },
        },
      }).values,
  );
  if (values.help) return "help";
  if (!values.stack) throw new UsageError("--stack is required: name the stack to check, e.g. --stack dev");
  if (values.json === "") throw new UsageError("--json= needs a file name, or use --json alone for stdout");
  const cwd = path.resolve(values.cwd ?? ".");
  if (!["Pulumi.yaml", "Pulumi.yml"].some((file) => fs.existsSync(path.join(cwd, file)))) {
    throw new UsageError(`no Pulumi.yaml in ${cwd}: pass --cwd <the folder of the Pulumi program>`);
  }
  return {
    stack: values.stack,
    cwd,
    ...(values.json !== undefined ? { json: values.json } : {}),
    ...(values["pulumi-root"] !== undefined ? { pulumiRoot: values["pulumi-root"] } : {}),
  };
}

/** The engine's own words, without the Automation API's wrapping: they name the failing resource. */
function describeFailure(error: unknown, args: DriftArgs): string {
  if (error instanceof StackNotFoundError) {
    return `stack "${args.stack}" does not exist in the backend for ${args.cwd}; \`pulumi stack ls\` there lists the stacks.`;
  }
  const result = (error as { commandResult?: { stdout?: string; stderr?: string } }).commandResult;
  if (result) {
    const lines = `${result.stderr ?? ""}\n${result.stdout ?? ""}`.split("\n").map((line) => line.trimEnd());
    const meaningful = lines.filter((line) => /error|failed|denied|cannot|passphrase/i.test(line));
    return (meaningful.length > 0 ? meaningful : lines.filter(Boolean).slice(-15)).join("\n");
  }
  return error instanceof Error ? error.message : String(error);
}

export async function runDrift(args: DriftArgs): Promise<number> {
  const cli = await locatePulumi(args.pulumiRoot);
  const envVars: Record<string, string> = cli.binDir
    ? { PATH: `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}` }
    : {};
  const stack = await LocalWorkspace.selectStack(
    { stackName: args.stack, workDir: args.cwd },
    { pulumiCommand: cli.command, envVars },
  );
  const report = await detectDrift(stack);
  const table = formatDriftTable(report);
  if (args.json !== undefined) {
    const json: DriftJson = {
      ...report,
      cwd: args.cwd,
      drift: report.drifted.length > 0,
      checkedAt: new Date().toISOString(),
    };
    const text = `${JSON.stringify(json, null, 2)}\n`;
    if (args.json === "-") {
      process.stdout.write(text);
      process.stderr.write(`${table}\n`);
    } else {
      fs.writeFileSync(args.json, text);
      process.stdout.write(`${table}\n`);
    }
  } else {
    process.stdout.write(`${table}\n`);
  }
  return report.drifted.length > 0 ? EXIT.drift : EXIT.noDrift;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.noDrift;
  }
  let args: DriftArgs | "help" | undefined;
  try {
    if (command !== "drift") throw new UsageError(command ? `unknown command "${command}"` : "a command is required");
    args = parseDriftArgs(rest);
    if (args === "help") {
      process.stdout.write(`${USAGE}\n`);
      return EXIT.noDrift;
    }
    return await runDrift(args);
  } catch (error) {
    const message =
      args && args !== "help" ? describeFailure(error, args) : error instanceof Error ? error.message : String(error);
    process.stderr.write(`pulumi-proxy ${command ?? ""}: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
    return EXIT.error;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
