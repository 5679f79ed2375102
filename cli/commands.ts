import { type CliCommand, usageLines } from "./command";
import { command as coverage } from "./coverage/command";
import { command as drift } from "./drift/command";
import { command as fleet } from "./fleet/command";
import { command as plan } from "./plan/command";
import { command as policy } from "./policy/command";
import { command as provider } from "./provider/command";
import { command as recover } from "./recover/command";
import { command as report } from "./report/command";
import { command as sdk } from "./sdk/command";
import { command as server } from "./server/command";

/**
 * Every `pulumi-proxy` command, once, in the order the usage lists them. A new command is a folder
 * `cli/<name>/` whose `command.ts` exports its `command`, and an entry here: `main` dispatches on this
 * list and the top-level usage is made from it.
 */
export const COMMANDS: readonly CliCommand[] = [
  drift,
  plan,
  fleet,
  coverage,
  provider,
  sdk,
  report,
  recover,
  policy,
  server,
];

/** `pulumi-proxy --help`: every command's synopsis, then one line on what each is for. */
export function topLevelUsage(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return [
    usageLines([...COMMANDS.flatMap((command) => command.usage), "pulumi-proxy --version"]),
    "",
    "Manages a proxy service's account alongside Pulumi. Commands (each has its own --help):",
    ...COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
  ].join("\n");
}
