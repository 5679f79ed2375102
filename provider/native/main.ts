#!/usr/bin/env node
/** `pulumi-resource-proxy` as the package runs it, with node and this package's node_modules. */
import { startPlugin } from "./start";

// Before anything loads @pulumi/pulumi: the modules of it that the plugin never calls (`typescript`,
// `@npmcli/arborist`, …) then load only at a first use (the file lists them and says how), instead
// of about 0.3 s of every start.
startPlugin(() => {
  const { deferPulumiModules } = require("pulumi-proxy/defer-modules") as {
    deferPulumiModules(pulumiFile: string): string[];
  };
  deferPulumiModules(require.resolve("@pulumi/pulumi"));
});
