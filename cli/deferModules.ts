/**
 * Imported first by main.ts, for its side effect: the `typescript` and `@npmcli/arborist` that
 * `@pulumi/pulumi` (the Automation API too) loads at once, and that no command calls, load only at a
 * first use (provider/process/defer-modules.cjs says how). That was about a third of every
 * `pulumi-proxy` start, `--help` included.
 */
const { deferPulumiModules } = require("pulumi-proxy/defer-modules") as {
  deferPulumiModules(pulumiFile: string): string[];
};
deferPulumiModules(require.resolve("@pulumi/pulumi"));
