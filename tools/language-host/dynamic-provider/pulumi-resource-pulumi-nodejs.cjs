#!/usr/bin/env node
// The dynamic provider's launcher, installed into the CLI's bin folder by tools/provision-pulumi.mjs
// in place of the shell script that ships in @pulumi/pulumi.
//
// Why: the engine starts this provider with its own address as the last argument and, when the
// engine is killed, nobody stops the provider: upstream's script starts node as a child of `sh`,
// and that node serves gRPC forever (about 200 MB per killed `pulumi up`). Here the provider runs in
// this very process, and a watchdog ends it once the engine no longer accepts connections, the way
// upstream's Go plugins health-check their engine.
//
// What stays the same: the provider is @pulumi/pulumi's cmd/dynamic-provider, resolved from the
// folder the engine starts it in (the program's), with the same arguments; state is untouched.
"use strict";

const net = require("node:net");
const path = require("node:path");

const CHECK_EVERY_MS = 1_000;
// One refused connection can be a blip under load; two in a row a second apart mean the engine is gone.
const FAILURES_BEFORE_EXIT = 2;

/** Host and port of an engine address such as `127.0.0.1:45678`. @param {string} address */
function parseAddress(address) {
  const at = address.lastIndexOf(":");
  const port = Number(address.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port)) return undefined;
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ""), port };
}

/** Exits once the engine at `address` stops accepting connections. @param {{ host: string, port: number }} engine */
function watchEngine(engine) {
  let failures = 0;
  const check = () => {
    const socket = net.connect({ ...engine, timeout: CHECK_EVERY_MS });
    const settle = (/** @type {boolean} */ reachable) => {
      socket.destroy();
      failures = reachable ? 0 : failures + 1;
      if (failures >= FAILURES_BEFORE_EXIT) {
        process.stderr.write(`dynamic provider: the engine at ${engine.host}:${engine.port} is gone; stopping\n`);
        process.exit(1);
      }
    };
    socket.once("connect", () => settle(true));
    socket.once("error", () => settle(false));
    socket.once("timeout", () => settle(false));
  };
  // unref: the watchdog alone never keeps the provider alive.
  setInterval(check, CHECK_EVERY_MS).unref();
}

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
const engine = parseAddress(process.argv.at(-1) ?? "");
if (engine) watchEngine(engine);
// The provider reads its arguments from process.argv.slice(2), which are ours unchanged.
require(providerPath);
