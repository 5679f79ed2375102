import { parseArgs } from "node:util";
import { type CliCommand, usageLines } from "../command";
import { runFleetDrift } from "../fleet/drift";
import { fleetOption, withFleetStack } from "../fleet/reports";
import { loadFleet } from "../fleet/spec";
import {
  ENVIRONMENT_USAGE,
  openTargetStack,
  parseOrExplain,
  reportFailure,
  STACK_OPTIONS,
  STACK_USAGE,
  type StackTarget,
  stackTarget,
  UsageError,
} from "../stack";
import { type DriftReport, detectDrift } from "./detect";
import { formatDriftTable, plannedNote, writeDriftOutput } from "./table";

const SYNOPSIS = [
  "pulumi-proxy drift --stack <name> [--cwd <dir>] [--json[=<file>]] [--pulumi-root <dir>]",
  "pulumi-proxy drift --fleet <file or dir> [--json[=<file>]]   every stack of a fleet, one report",
];

const USAGE = `${usageLines(SYNOPSIS)}

Runs \`pulumi preview --refresh\` on an existing stack and lists what changed outside Pulumi:
resource, property, recorded → actual value, and what the next \`pulumi up --refresh\` would do
(a plain \`pulumi up\` diffs the program against the recorded values, so it can leave drift in place).

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
    [formatDriftTable(report), ...plannedNote(report.drifted.length > 0)].join("\n\n"),
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

/** `pulumi-proxy drift …`: its own usage and errors; exit 0 no drift, 2 drift, 1 error. */
export async function driftCommand(argv: string[]): Promise<number> {
  let args: DriftArgs | "help" | undefined;
  try {
    const { fleet, rest } = fleetOption(argv);
    args = parseDriftArgs(fleet ? withFleetStack(rest, loadFleet(fleet)) : argv);
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
    reportFailure("drift", USAGE, error, args);
    return EXIT.error;
  }
}

export const command: CliCommand = {
  name: "drift",
  summary: "what changed outside Pulumi, property by property, and what `pulumi up --refresh` does about it",
  usage: SYNOPSIS,
  run: driftCommand,
};
