// Ends this process once the Pulumi engine that started it is gone. Required by the dynamic
// provider's launcher (installed beside it as pulumi-proxy-engine-watch.cjs) and by the native
// plugin (provider/native/main.ts, as the package's `pulumi-proxy/engine-watch`).
//
// Why: the engine starts a provider with its own address and, when the engine is killed, nobody
// stops the provider, which serves gRPC forever (about 200 MB per killed `pulumi up`). Upstream's
// Go plugins health-check their engine; this does the same, with a connection a second.
"use strict";

const net = require("node:net");

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

/**
 * Exits once the engine at `address` stops accepting connections; does nothing for an address it
 * cannot read. @param {string} address @param {string} name how messages name this process
 * @returns {boolean} whether it watches
 */
function watchEngine(address, name) {
  const engine = parseAddress(address);
  if (!engine) return false;
  let failures = 0;
  const check = () => {
    const socket = net.connect({ ...engine, timeout: CHECK_EVERY_MS });
    const settle = (/** @type {boolean} */ reachable) => {
      socket.destroy();
      failures = reachable ? 0 : failures + 1;
      if (failures >= FAILURES_BEFORE_EXIT) {
        process.stderr.write(`${name}: the engine at ${engine.host}:${engine.port} is gone; stopping\n`);
        process.exit(1);
      }
    };
    socket.once("connect", () => settle(true));
    socket.once("error", () => settle(false));
    socket.once("timeout", () => settle(false));
  };
  // unref: the watchdog alone never keeps the process alive.
  setInterval(check, CHECK_EVERY_MS).unref();
  return true;
}

module.exports = { watchEngine };
