#!/usr/bin/env node
// First: the large modules of @pulumi/pulumi that no command calls stay out of the imports below.
import "./deferModules";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { release } from "../provider/native/release";
import { runServerCli } from "../server/cli";
import { coverageCommand } from "./coverage/command";
import { type DriftReport, detectDrift } from "./drift";
import { fleetCommand } from "./fleet/command";
import { runFleetDrift } from "./fleet/drift";
import { fleetOption, withFleetStack } from "./fleet/reports";
import { loadFleet } from "./fleet/spec";
import { planCommand } from "./plan/command";
import { policyCommand } from "./policyInit";
import { providerCommand } from "./providerInstall";
import { recoverCommand } from "./recover/command";
import { reportCommand } from "./report/command";
import { sdkCommand } from "./sdkPath";
import {
  describeFailure,
  ENVIRONMENT_USAGE,
  openTargetStack,
  parseOrExplain,
  STACK_OPTIONS,
  STACK_USAGE,
  type StackTarget,
  stackTarget,
  UsageError,
} from "./stack";
import { formatDriftTable, writeDriftOutput } from "./table";

const USAGE = `usage: pulumi-proxy drift --stack <name> [--cwd <dir>] [--json[=<file>]] [--pulumi-root <dir>]
       pulumi-proxy drift --fleet <file or dir> [--json[=<file>]]   every stack of a fleet, one report
       pulumi-proxy plan --stack <name> [--cwd <dir>] [--refresh] [--json | --markdown]  (plan --help for more)
       pulumi-proxy fleet up --fleet <file or dir>   one stack per customer, each with its own key (fleet --help)
       pulumi-proxy coverage --stack <name> [--import-file <file>] [--json]  what the account holds that the stack does not manage
       pulumi-proxy provider install   put the native \`proxy\` provider plugin where Pulumi finds it
       pulumi-proxy sdk python | go    where the native provider's Python wheel or Go module is, for pip or go.mod
       pulumi-proxy report [--stack <name>] [--markdown | --json]  usage, ceilings, spend and keys as one HTML page (report --help)
       pulumi-proxy recover --stack <name> | --fleet <file> [--up | --destroy] [--json]  after a killed run (recover --help)
       pulumi-proxy policy init <dir>   write a policy pack folder for \`pulumi preview --policy-pack\`
       pulumi-proxy server [--port <port>] [...]   the reference server (\`pulumi-proxy server --help\`)
       pulumi-proxy --version

Runs \`pulumi preview --refresh\` on an existing stack and lists what changed outside Pulumi:
resource, property, recorded → actual value, and what the next \`pulumi up\` would do.

${STACK_USAGE}
  --json               write a machine-readable report to stdout; the table goes to stderr
  --json=<file>        write the report to <file>; the table goes to stdout
  --help               this text

${ENVIRONMENT_USAGE}

Exit codes: 0 no drift, 2 drift found, 1 error.`;

export const EXIT = { noDrift: 0, error: 1, drift: 2 } as const;

export interface DriftArgs extends StackTarget {
  /** "-" for stdout, else a file path. */
  json?: string;
}

/**
 * The JSON written by `--json`: the drift report plus what a CI job branches on. `version: 1` is the
 * shape; fields are only ever added within a version, and a rename or a removal bumps it.
 */
export interface DriftJson extends DriftReport {
  version: 1;
  cwd: string;
  drift: boolean;
  checkedAt: string;
}

export function parseDriftArgs(argv: string[]): DriftArgs | "help" {
  // A bare --json means stdout; parseArgs would otherwise swallow the next argument as its value.
  const args = argv.map((arg) => (arg === "--json" ? "--json=-" : arg));
  const values = parseOrExplain(
    () =>
      parseArgs({
        args,
        strict: true,
        options: { ...STACK_OPTIONS, json: { type: "string" }, help: { type: "boolean", short: "h" } },
      }).values,
  );
  if (values.help) return "help";
  const target = stackTarget(values);
  if (values.json === "") throw new UsageError("--json= needs a file name, or use --json alone for stdout");
  return { ...target, ...(values.json !== undefined ? { json: values.json } : {}) };
}

export async function runDrift(args: DriftArgs): Promise<number> {
  const stack = await openTargetStack(args);
  const report = await detectDrift(stack);
  writeDriftOutput(
    formatDriftTable(report),
    args.json,
    (): DriftJson => ({
      version: 1,
      ...report,
      cwd: args.cwd,
      drift: report.drifted.length > 0,
      checkedAt: new Date().toISOString(),
    }),
  );
  return report.drifted.length > 0 ? EXIT.drift : EXIT.noDrift;
}

/**
 * The installed package's version, from the package.json two folders above dist/cli/; the release
 * executable has none beside it, and carries the version its build baked in.
 */
function packageVersion(): string {
  if (release) return release.version;
  return JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")).version;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "plan") return planCommand(rest);
  if (command === "fleet") return fleetCommand(rest);
  if (command === "provider") return providerCommand(rest);
  if (command === "sdk") return sdkCommand(rest);
  if (command === "recover") return recoverCommand(rest);
  if (command === "coverage") return coverageCommand(rest);
  if (command === "report") return reportCommand(rest);
  if (command === "policy") return policyCommand(rest);
  if (command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.noDrift;
  }
  if (command === "--version" || command === "-v") {
    process.stdout.write(`pulumi-proxy ${packageVersion()}\n`);
    return EXIT.noDrift;
  }
  if (command === "server") {
    await runServerCli(rest);
    return EXIT.noDrift;
  }
  let args: DriftArgs | "help" | undefined;
  try {
    if (command !== "drift") throw new UsageError(command ? `unknown command "${command}"` : "a command is required");
    const { fleet, rest: others } = fleetOption(rest);
    args = parseDriftArgs(fleet ? withFleetStack(others, loadFleet(fleet)) : rest);
    if (fleet && args !== "help") {
      return await runFleetDrift(fleet, {
        ...(args.json !== undefined ? { json: args.json } : {}),
        ...(args.pulumiRoot ? { pulumiRoot: args.pulumiRoot } : {}),
      });
    }
    if (args === "help") {
      process.stdout.write(`${USAGE}\n`);
      return EXIT.noDrift;
    }
    return await runDrift(args);
  } catch (error) {
    const message =
      args && args !== "help" ? describeFailure(error, args) : error instanceof Error ? error.message : String(error);
    process.stderr.write(`${["pulumi-proxy", command].filter(Boolean).join(" ")}: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
    return EXIT.error;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
