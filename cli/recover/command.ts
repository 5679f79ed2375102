import { parseArgs } from "node:util";
import { type CliCommand, usageLines } from "../command";
import { runFleetRecover } from "../fleet/recover";
import { fleetOption, withFleetStack } from "../fleet/reports";
import { loadFleet } from "../fleet/spec";
import {
  describeFailure,
  ENVIRONMENT_USAGE,
  parseOrExplain,
  STACK_OPTIONS,
  STACK_USAGE,
  stackTarget,
  UsageError,
} from "../stack";
import { emptyReport, type RecoverArgs, RecoveryError, recoverStack } from "./steps";

const SYNOPSIS = [
  "pulumi-proxy recover --stack <name> [--cwd <dir>] [--up | --destroy] [--json] [--pulumi-root <dir>]",
  "pulumi-proxy recover --fleet <file or dir> [--up | --destroy] [--json] [--pulumi-root <dir>]",
];

export const RECOVER_USAGE = `${usageLines(SYNOPSIS)}

After a \`pulumi up\` or \`pulumi destroy\` was killed (a cancelled, timed-out or pre-empted CI job),
brings the stack back to a consistent state, reading what the kill left from the backend itself:
  1. stops if a run on this machine still holds the stack's lock (it is not a killed run);
  2. removes the state's metadata sidecar <stack>.json.attrs if it is empty (a kill while the CLI
     saved the state; every command then fails with "failed to load checkpoint: EOF"); a file that
     holds anything is never deleted;
  3. releases the lock the killed run left (\`pulumi cancel\`);
  4. finishes the killed operation: \`pulumi up\` when the state records creates or updates in
     flight (the provider's idempotency keys make the API replay those writes, never repeat them),
     \`pulumi destroy\` when you say a destroy was killed. The \`up\` takes over what the killed run
     made and no state records (an object created since the stack's last completed update whose
     name, scopes or place match a resource the state lacks), so it creates nothing twice even
     after the API has forgotten the idempotency keys (24 hours);
  5. drops the state's records of the interrupted operations (\`pulumi refresh --clear-pending-creates\`).
Each step it takes is printed with the reason.

${STACK_USAGE}
  --fleet <path>       every stack of a fleet (fleet.json or its folder), after a killed \`fleet up\`
                       (with --up) or \`fleet destroy\` (with --destroy); each line names its stack
  --up                 the killed run was a \`pulumi up\`: finish it even if the state cannot tell
  --destroy            the killed run was a \`pulumi destroy\`: finish it
  --json               print the steps as JSON on stdout (the log goes to stderr)
  --help               this text

${ENVIRONMENT_USAGE}

Exit codes: 0 the stack is consistent, 1 it could not be recovered (the message says why and the fix).`;

export function parseRecoverArgs(argv: string[]): RecoverArgs | "help" {
  const { values } = parseOrExplain(() =>
    parseArgs({
      args: argv,
      strict: true,
      options: {
        ...STACK_OPTIONS,
        up: { type: "boolean" },
        destroy: { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }),
  );
  if (values.help) return "help";
  if (values.up && values.destroy)
    throw new UsageError("--up and --destroy exclude each other: name the command that was killed");
  const operation = values.destroy ? "destroy" : values.up ? "up" : undefined;
  return { ...stackTarget(values), json: values.json === true, ...(operation ? { operation } : {}) };
}

/** `pulumi-proxy recover …`: the steps go to stdout (stderr with --json, where the engine's output goes too). */
export async function recoverCommand(argv: string[]): Promise<number> {
  let args: RecoverArgs | "help" | undefined;
  let fleet: string | undefined;
  try {
    // With --fleet, the other options are parsed as the one-stack form's, for a stand-in stack.
    const split = fleetOption(argv);
    fleet = split.fleet;
    args = parseRecoverArgs(fleet ? withFleetStack(split.rest, loadFleet(fleet)) : argv);
  } catch (error) {
    process.stderr.write(
      `pulumi-proxy recover: ${error instanceof Error ? error.message : String(error)}\n\n${RECOVER_USAGE}\n`,
    );
    return 1;
  }
  if (args === "help") {
    process.stdout.write(`${RECOVER_USAGE}\n`);
    return 0;
  }
  const out = args.json ? process.stderr : process.stdout;
  if (fleet) {
    const { stack: _standIn, cwd: _program, ...options } = args;
    try {
      return await runFleetRecover(fleet, options, out);
    } catch (error) {
      process.stderr.write(`pulumi-proxy recover: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  }
  const target = args;
  const report = emptyReport(target.stack);
  out.write(`pulumi-proxy recover: stack ${target.stack}\n`);
  try {
    await recoverStack(target, report, (line) => out.write(`${line}\n`));
    out.write(`pulumi-proxy recover: stack ${target.stack} is consistent: unlocked, nothing pending\n`);
  } catch (error) {
    report.error = error instanceof RecoveryError ? error.message : describeFailure(error, target);
    process.stderr.write(`pulumi-proxy recover: ${report.error}\n`);
  }
  if (target.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return report.recovered ? 0 : 1;
}

export const command: CliCommand = {
  name: "recover",
  summary: "after a killed `pulumi up` or `destroy`: unlock the stack and finish or undo what it left",
  usage: SYNOPSIS,
  run: recoverCommand,
};
