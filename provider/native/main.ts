#!/usr/bin/env node
/**
 * `pulumi-resource-proxy`: the engine starts it with its own address as the first argument that is
 * not a flag. The Node SDK's log functions reach the engine through that address, which they read
 * from the environment when first used, so it is set before anything loads the SDK.
 */
const engineAddress = process.argv.slice(2).find((arg) => !arg.startsWith("-"));
if (engineAddress) process.env.PULUMI_NODEJS_ENGINE = engineAddress;

// A killed engine stops nobody: the plugin exits by itself once the engine stops answering.
const { watchEngine } = require("pulumi-proxy/engine-watch") as {
  watchEngine(address: string, name: string): boolean;
};
if (engineAddress) watchEngine(engineAddress, "pulumi-resource-proxy");

// Before anything loads @pulumi/pulumi: its `typescript` and `@npmcli/arborist`, which the plugin never
// calls, then load only at a first use (the file says how), instead of about 0.3 s of every start.
const { deferPulumiModules } = require("pulumi-proxy/defer-modules") as {
  deferPulumiModules(pulumiFile: string): string[];
};
deferPulumiModules(require.resolve("@pulumi/pulumi"));

// Loaded after the address is set (see above); an import would be hoisted above it.
const { serve } = require("./server") as typeof import("./server");

serve().catch((error: unknown) => {
  process.stderr.write(
    `pulumi-resource-proxy: cannot serve: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
