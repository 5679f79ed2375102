#!/usr/bin/env node
// First: the large modules of @pulumi/pulumi that no command calls stay out of the imports below.
import "./deferModules";
import { packageVersion } from "../provider/native/version";
import { COMMANDS, topLevelUsage } from "./commands";

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = COMMANDS.find((entry) => entry.name === name);
  if (command) return command.run(rest);
  if (name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(`${topLevelUsage()}\n`);
    return 0;
  }
  if (name === "--version" || name === "-v") {
    process.stdout.write(`pulumi-proxy ${packageVersion()}\n`);
    return 0;
  }
  process.stderr.write(`pulumi-proxy: ${name ? `unknown command "${name}"` : "a command is required"}\n`);
  process.stderr.write(`\n${topLevelUsage()}\n`);
  return 1;
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
