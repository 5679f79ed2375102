/**
 * The first arguments that make the release executable the tool rather than the plugin: every
 * command's name and the help and version flags. Kept apart from cli/commands.ts so that the
 * plugin's start loads none of the commands; test/foundation/layout.test.ts checks it names exactly
 * the commands of that table.
 */
export const TOOL_ARGUMENTS = new Set([
  "drift",
  "plan",
  "fleet",
  "coverage",
  "provider",
  "sdk",
  "report",
  "recover",
  "policy",
  "server",
  "help",
  "--help",
  "-h",
  "--version",
  "-v",
]);
