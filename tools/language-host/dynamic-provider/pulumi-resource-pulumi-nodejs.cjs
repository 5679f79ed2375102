#!/usr/bin/env node
// The dynamic provider's launcher, installed into the CLI's bin folder by tools/provision-pulumi.mjs
// in place of the shell script that ships in @pulumi/pulumi.
//
// Why: the engine starts this provider with its own address as the last argument and, when the
// engine is killed, nobody stops the provider: upstream's script starts node as a child of `sh`,
// and that node serves gRPC forever (about 200 MB per killed `pulumi up`). Here the provider runs in
// this very process, and a watchdog (engine-watch.cjs) ends it once the engine no longer accepts
// connections, the way upstream's Go plugins health-check their engine.
//
// What stays the same: the provider is @pulumi/pulumi's cmd/dynamic-provider, resolved from the
// folder the engine starts it in (the program's), with the same arguments; state is untouched.
"use strict";

const path = require("node:path");
// Provisioning installs the watchdog beside this file (provider/process/engine-watch.cjs, the package's own).
const { watchEngine } = require(path.join(__dirname, "pulumi-proxy-engine-watch.cjs"));

let providerPath;
try {
  providerPath = require.resolve("@pulumi/pulumi/cmd/dynamic-provider", { paths: [process.cwd()] });
} catch {
  process.stderr.write(
    `dynamic provider: @pulumi/pulumi is not installed for the program in ${process.cwd()}: run npm install there\n`,
  );
  process.exit(1);
}
// Provisioning installs the helper beside this file; a launcher copied alone still runs, only slower.
try {
  require(path.join(__dirname, "pulumi-proxy-defer-modules.cjs")).deferPulumiModules(providerPath);
} catch {}
// The engine's address comes last; logging and tracing flags may precede it.
watchEngine(process.argv.at(-1) ?? "", "dynamic provider");
// The provider reads its arguments from process.argv.slice(2), which are ours unchanged.
require(providerPath);
