/**
 * Imported first by main.ts, for its side effect: the modules that `@pulumi/pulumi` loads at once and
 * that no command calls (`typescript`, `@npmcli/arborist`, …; provider/process/defer-modules.cjs
 * lists them and says how) load only at a first use. `typescript` and arborist alone were about a
 * third of every `pulumi-proxy` start, `--help` included.
 */
const { deferPulumiModules } = require("pulumi-proxy/defer-modules") as {
  deferPulumiModules(pulumiFile: string): string[];
};
deferPulumiModules(require.resolve("@pulumi/pulumi"));
