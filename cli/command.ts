/**
 * The shape of every `pulumi-proxy` command: a folder `cli/<name>/` whose `command.ts` exports one
 * `command` of this type, listed once in `cli/commands.ts`. The top-level usage is made from these
 * entries, so a command's usage lines are written in its own folder only.
 */
export interface CliCommand {
  /** The first argument that selects it: `pulumi-proxy <name> …`. */
  name: string;
  /** One line for the top-level usage: what the command is for. */
  summary: string;
  /** Its synopsis lines, each starting `pulumi-proxy <name>`; the first ones of its own --help. */
  usage: readonly string[];
  /** Runs it with the arguments after its name; resolves with the process's exit code. */
  run(argv: string[]): number | Promise<number>;
}

/** `usage: <line>` and the lines after it aligned beneath, as every command's --help starts. */
export function usageLines(lines: readonly string[]): string {
  return lines.map((line, index) => `${index === 0 ? "usage:" : "      "} ${line}`).join("\n");
}
