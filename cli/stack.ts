import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { type ConfigMap, type Deployment, LocalWorkspace, Stack, StackNotFoundError } from "@pulumi/pulumi/automation";
import { workspaceEnv } from "../provider/core/pulumiState";
import { type ApiSettings, apiSettings, type ConfigKey } from "../provider/core/settings";
import { enginePath, locatePulumi } from "./pulumiCli";

/** A mistake in the command line: the commands print it with their usage text and exit 1. */
export class UsageError extends Error {}

/** parseArgs throws plain errors; they are usage mistakes, so they exit 1 with the usage text. */
export function parseOrExplain<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Which existing stack a command works on, as every subcommand takes it. */
export interface StackTarget {
  stack: string;
  /** The program folder, holding Pulumi.yaml. */
  cwd: string;
  pulumiRoot?: string;
}

export const STACK_OPTIONS = {
  stack: { type: "string" },
  cwd: { type: "string" },
  "pulumi-root": { type: "string" },
} as const;

const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const;

/**
 * A stack command's flags: the stack's own and `--help` beside the command's `options`. Unknown or
 * malformed flags are a UsageError, which the command prints with its usage.
 */
type StackFlags<Options> = ReturnType<
  typeof parseArgs<{ args: string[]; strict: true; options: typeof STACK_OPTIONS & Options & typeof HELP_OPTION }>
>["values"];

export function parseStackFlags<const Options extends NonNullable<ParseArgsConfig["options"]>>(
  argv: string[],
  options: Options,
): StackFlags<Options> {
  return parseOrExplain(
    () => parseArgs({ args: argv, strict: true, options: { ...STACK_OPTIONS, ...options, ...HELP_OPTION } }).values,
  );
}

export const STACK_USAGE = `  --stack <name>       the stack (required)
  --cwd <dir>          the program folder, which holds Pulumi.yaml (default: the current folder)
  --pulumi-root <dir>  use <dir>/bin/pulumi instead of \`pulumi\` on PATH (or set PULUMI_PROXY_CLI_ROOT)`;

export const ENVIRONMENT_USAGE = `The backend and secrets come from the usual environment: \`pulumi login\` or PULUMI_BACKEND_URL,
PULUMI_CONFIG_PASSPHRASE or PULUMI_ACCESS_TOKEN.`;

/** Validates the stack options that parseArgs returned for STACK_OPTIONS. */
export function stackTarget(values: { stack?: string; cwd?: string; "pulumi-root"?: string }): StackTarget {
  if (!values.stack) throw new UsageError("--stack is required: name the stack, e.g. --stack dev");
  const cwd = path.resolve(values.cwd ?? ".");
  if (!["Pulumi.yaml", "Pulumi.yml"].some((file) => fs.existsSync(path.join(cwd, file)))) {
    throw new UsageError(`no Pulumi.yaml in ${cwd}: pass --cwd <the folder of the Pulumi program>`);
  }
  return {
    stack: values.stack,
    cwd,
    ...(values["pulumi-root"] !== undefined ? { pulumiRoot: values["pulumi-root"] } : {}),
  };
}

/** Opens the existing stack with the user's own CLI and environment; provisions nothing. */
export async function openTargetStack(target: StackTarget): Promise<Stack> {
  const cli = await locatePulumi(target.pulumiRoot);
  const workspace = await LocalWorkspace.create({
    workDir: target.cwd,
    pulumiCommand: cli.command,
    envVars: { PATH: enginePath(cli) },
  });
  return openStack(target.stack, workspace);
}

/**
 * The existing stack `name` of `workspace`, left as it is the user's choice of current stack.
 * Stack.select runs `pulumi stack select`, which records the stack as the folder's current one: after
 * `pulumi-proxy drift --stack prod`, a bare `pulumi up` there deployed prod. Every command the
 * Automation API runs names its stack (`--stack`), and against a stack that does not exist fails
 * with StackNotFoundError, so the stack is opened through a view of the workspace whose
 * `selectStack` does nothing; the workspace itself, which `Stack.createOrSelect` may use, keeps its own.
 */
export function openStack(name: string, workspace: LocalWorkspace): Promise<Stack> {
  const leavesSelection: LocalWorkspace = Object.create(workspace, { selectStack: { value: async () => {} } });
  return Stack.select(name, leavesSelection);
}

/**
 * The stack's state as `pulumi stack export` prints it, its secrets left encrypted. The Automation
 * API's exportStack passes --show-secrets: a key derivation from the passphrase (about 0.2 s of CPU)
 * and every secret of the state in this process, for readers that need no secret.
 */
export function exportedState(stack: Stack): Promise<Deployment> {
  return cliJson<Deployment>(stack, ["stack", "export"]);
}

/**
 * The stack's config with its secrets masked: `pulumi config --json` without the Automation API's
 * --show-secrets, and so without its key derivation (0.08 s of CPU against 0.25 s), for readers of
 * plain values such as a fleet stack's key id.
 */
export function maskedConfig(stack: Stack): Promise<ConfigMap> {
  return cliJson<ConfigMap>(stack, ["config", "--json"]);
}

/**
 * The CLI's JSON answer about the stack, run as the Automation API runs its commands (its binary,
 * folder and environment). A failure carries the CLI's output as the Automation API's do, for
 * describeFailure.
 */
function cliJson<T>(stack: Stack, command: string[]): Promise<T> {
  const { workspace } = stack;
  const args = [...command, "--stack", stack.name, "--non-interactive"];
  return new Promise((resolve, reject) => {
    execFile(
      workspace.pulumiCommand.command,
      args,
      { cwd: workspace.workDir, env: workspaceEnv(workspace), maxBuffer: 1 << 30 },
      (error, stdout, stderr) => {
        if (error)
          reject(Object.assign(new Error(`pulumi ${command.join(" ")} failed`), { commandResult: { stdout, stderr } }));
        else resolve(JSON.parse(stdout) as T);
      },
    );
  });
}

/**
 * The settings of the API the stack's provider talks to, every one the provider honours: the stack's
 * config first, the environment as the provider's fallback.
 */
export function stackSettings(config: ConfigMap): ApiSettings {
  return apiSettings((key: ConfigKey) => config[key]?.value);
}

/** The engine's own words, without the Automation API's wrapping: they name the failing resource. */
export function describeFailure(error: unknown, target: StackTarget): string {
  if (error instanceof StackNotFoundError) {
    return `stack "${target.stack}" does not exist in the backend for ${target.cwd}; \`pulumi stack ls\` there lists the stacks.`;
  }
  const result = (error as { commandResult?: { stdout?: string; stderr?: string } }).commandResult;
  if (result) {
    // The Automation API's own "Command failed with exit code 255: pulumi preview … --event-log tcp://…"
    // names its plumbing, not the problem: the engine's lines do.
    const lines = `${result.stderr ?? ""}\n${result.stdout ?? ""}`
      .split("\n")
      .map((line) => line.trimEnd())
      .filter(
        (line) => !/^(code: -?\d+|stdout:|stderr:|err\?:)|Command failed with exit code|--event-log/.test(line.trim()),
      );
    const meaningful = lines.filter((line) => /error|failed|denied|cannot|passphrase/i.test(line));
    return (meaningful.length > 0 ? meaningful : lines.filter(Boolean).slice(-15)).join("\n");
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * A subcommand's frame: parses, runs, and turns a failure into its message (the usage text after a
 * usage mistake) and exit code 1.
 */
export async function runSubcommand<A extends StackTarget>(
  name: string,
  usage: string,
  argv: string[],
  parse: (argv: string[]) => A | "help",
  run: (args: A) => Promise<number>,
): Promise<number> {
  let args: A | "help" | undefined;
  try {
    args = parse(argv);
    if (args === "help") {
      process.stdout.write(`${usage}\n`);
      return 0;
    }
    return await run(args);
  } catch (error) {
    reportFailure(name, usage, error, args);
    return 1;
  }
}

/**
 * Prints a stack command's failure: the stack's own explanation once its flags parsed, the usage text
 * after a usage mistake.
 */
export function reportFailure(
  name: string,
  usage: string,
  error: unknown,
  args: StackTarget | "help" | undefined,
): void {
  const message =
    args && args !== "help" ? describeFailure(error, args) : error instanceof Error ? error.message : String(error);
  process.stderr.write(`pulumi-proxy ${name}: ${message}\n`);
  if (error instanceof UsageError) process.stderr.write(`\n${usage}\n`);
}
