import fs from "node:fs";
import { SENSITIVE_SCOPES } from "../../contract/keys";
import { clientFor } from "../../provider/core/settings";
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
import { textTable } from "../table";
import { importFileOf, movingFileOf } from "./importFile";
import { type CoverageReport, coverageOf, stateNames } from "./report";

const SYNOPSIS = [
  "pulumi-proxy coverage --stack <name> [--cwd <dir>] [--import-file <file> [--moving]] [--json] [--pulumi-root <dir>]",
];

const USAGE = `${usageLines(SYNOPSIS)}

Lists what the account holds and which of it the stack manages, by kind. Unmanaged API keys with
${SENSITIVE_SCOPES.join(" or ")} are named first, as a security finding. With --import-file, writes
Pulumi's import file for every unmanaged object, with readable names, for
\`pulumi import --file <file>\` into a stack that uses the native provider (docs/guides/migrate-to-native.md).
The key the stack's provider uses is never in the file: a destroy would revoke it.

The ids come from the stack's state (dynamic and native resources alike); the account from one walk
of each list (200 per request), with the stack's proxy:apiUrl and proxy:apiKey (or PROXY_API_URL and
PROXY_API_KEY); the key needs proxy-users:read and keys:write (the key list asks for it). Nothing is changed, at the API or in the state.

${STACK_USAGE}
  --import-file <file> write the import file for the unmanaged objects to <file>
  --moving             write instead the import file that moves the stack's dynamic resources to the
                       native provider: their own names and ids, as native types
  --json               print the report as JSON (a stable shape, "version": 1) instead of text
  --help               this text

${ENVIRONMENT_USAGE}

Exit codes: 0 every object is managed, 2 unmanaged objects, 1 error.`;

export const COVERAGE_EXIT = { covered: 0, error: 1, unmanaged: 2 } as const;

export interface CoverageArgs extends StackTarget {
  importFile?: string;
  /** The import file moves the dynamic resources instead of listing the unmanaged objects. */
  moving: boolean;
  json: boolean;
}

/** `--json`: the report plus what a CI job branches on. Fields are only added within a version. */
export interface CoverageJson extends CoverageReport {
  version: 1;
  cwd: string;
  covered: boolean;
  importFile: string | null;
  checkedAt: string;
}

export function parseCoverageArgs(argv: string[]): CoverageArgs | "help" {
  const values = parseStackFlags(argv, {
    "import-file": { type: "string" },
    json: { type: "boolean" },
    moving: { type: "boolean" },
  });
  if (values.help) return "help";
  if (values.moving && !values["import-file"]) throw new UsageError("--moving needs --import-file <file> to write");
  if (values["import-file"] === "")
    throw new UsageError("--import-file needs a file name, e.g. --import-file import.json");
  return {
    ...stackTarget(values),
    json: values.json === true,
    moving: values.moving === true,
    ...(values["import-file"] !== undefined ? { importFile: values["import-file"] } : {}),
  };
}

const unmanagedCount = (report: CoverageReport) => report.kinds.reduce((sum, kind) => sum + kind.unmanaged.length, 0);

/** The report in text: findings first, then a line per kind, then what to do. Never a secret. */
export function formatCoverageText(report: CoverageReport, importFile: string | undefined, moving = false): string {
  const lines: string[] = [];
  if (report.findings.length > 0) {
    lines.push(
      `Security: ${report.findings.length} API key(s) with ${SENSITIVE_SCOPES.join(" or ")} that no stack manages:`,
    );
    for (const key of report.findings) lines.push(`  ${key.id}  "${key.name}"  ${key.scopes?.join(", ") ?? ""}`);
    lines.push("");
  }
  lines.push(`Coverage of stack ${report.stack}: ${report.percent} % of the account's objects are managed.`);
  const kindRows = report.kinds.map((kind) => {
    const gone = kind.goneFromAccount.length > 0 ? `, ${kind.goneFromAccount.length} in state but gone` : "";
    return [`  ${kind.type}`, `${kind.managed}/${kind.total} managed, ${kind.unmanaged.length} unmanaged${gone}`];
  });
  lines.push(...textTable(kindRows));
  if (report.credential) {
    lines.push(
      `  (key ${report.credential.id} "${report.credential.name}" is this stack's own credential: not counted, never imported)`,
    );
  }
  const open = unmanagedCount(report);
  if (importFile && moving) {
    lines.push(
      "",
      `Wrote ${importFile}: the stack's dynamic resources as native ones (docs/guides/migrate-to-native.md).`,
    );
  } else if (open > 0 && importFile) {
    lines.push("", `Wrote ${importFile}: ${open} object(s). Import them into a stack that uses the native provider:`);
    lines.push(`  pulumi import --file ${importFile} --protect=false`);
  } else if (open > 0) {
    lines.push("", `${open} object(s) are unmanaged: --import-file <file> writes Pulumi's import file for them.`);
  }
  return lines.join("\n");
}

export async function runCoverage(args: CoverageArgs): Promise<number> {
  const stack = await openTargetStack(args);
  const [config, deployment] = await Promise.all([stack.getAllConfig(), stack.exportStack()]);
  const settings = stackSettings(config);
  const client = clientFor(settings, "pulumi-proxy-coverage");
  const report = await coverageOf(args.stack, client, deployment, settings.apiKey.slice(-4));
  if (args.importFile) {
    const file = args.moving ? movingFileOf(deployment) : importFileOf(report, stateNames(deployment));
    fs.writeFileSync(args.importFile, `${JSON.stringify(file, null, 2)}\n`);
  }
  const covered = unmanagedCount(report) === 0;
  if (args.json) {
    const json: CoverageJson = {
      version: 1,
      ...report,
      cwd: args.cwd,
      covered,
      importFile: args.importFile ?? null,
      checkedAt: new Date().toISOString(),
    };
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    process.stdout.write(`${formatCoverageText(report, args.importFile, args.moving)}\n`);
  }
  return covered ? COVERAGE_EXIT.covered : COVERAGE_EXIT.unmanaged;
}

/** `pulumi-proxy coverage …`: its own usage, errors and exit codes. */
export function coverageCommand(argv: string[]): Promise<number> {
  return runSubcommand("coverage", USAGE, argv, parseCoverageArgs, runCoverage);
}

export const command: CliCommand = {
  name: "coverage",
  summary: "what the account holds that the stack does not manage, and Pulumi's import file for it",
  usage: SYNOPSIS,
  run: coverageCommand,
};
