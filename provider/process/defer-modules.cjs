// Loaded by the dynamic provider's launcher (installed beside it as pulumi-proxy-defer-modules.cjs),
// preloaded by tools/language-host into every program it runs, and required by the native plugin
// (provider/native/main.ts, as the package's `pulumi-proxy/defer-modules`).
//
// Why: `require("@pulumi/pulumi")` loads large modules that most processes never call.
// - `typescript` (about 9 MB of source), for serializing functions: a program needs it when it
//   declares a dynamic resource, a provider process never.
// - `@npmcli/arborist` and what it pulls in (pacote, sigstore, …), and `normalize-package-data`,
//   only for `pulumi.runtime.computeCodePaths`.
// - the Automation API (`pulumi.automation`, with execa), which a program or a provider calls only
//   when it drives another stack.
// - OpenTelemetry's SDK, Zipkin exporter and gRPC instrumentation, which the program harness's
//   tracing.js requires at its top and uses only when the engine passes `--tracing`.
// The first two were about 0.4 s of CPU in every provider process and 0.2 s in every program; the
// last two another 0.1 s in each (`pulumi preview` of the quickstart: 2.2 → 1.8 s of CPU, CLI
// included), paid on every preview, up, refresh and destroy.
//
// What it does: it puts a stand-in for each into Node's module cache, resolved exactly as
// @pulumi/pulumi resolves them. The first real use of a stand-in (any property read, `in`, key
// listing) loads the real module and forwards to it from then on, so behaviour is the same, only
// later. A module that is missing or already loaded is left alone.
"use strict";

const Module = require("node:module");
const path = require("node:path");

const DEFERRED = [
  "typescript",
  "@npmcli/arborist",
  // computeCodePaths's other import: a function, imported with `import normalize from`.
  "normalize-package-data",
  "@pulumi/pulumi/automation",
  // tracing.js's own imports; @opentelemetry/api stays, every span goes through it.
  "@opentelemetry/sdk-trace-node",
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/resources",
  "@opentelemetry/exporter-zipkin",
  "@opentelemetry/instrumentation",
  "@opentelemetry/instrumentation-grpc",
];

/**
 * Defers the heavy modules of the @pulumi/pulumi installed at `pulumiFile` (any file inside it).
 * @param {string} pulumiFile
 * @returns {string[]} the modules deferred
 */
function deferPulumiModules(pulumiFile) {
  const from = [path.dirname(pulumiFile)];
  const deferred = [];
  for (const name of DEFERRED) {
    let resolved;
    try {
      resolved = require.resolve(name, { paths: from });
    } catch {
      continue;
    }
    if (require.cache[resolved]) continue;
    require.cache[resolved] = standIn(resolved);
    deferred.push(name);
  }
  return deferred;
}

/** A loaded module whose exports load the real module at first use. @param {string} resolved */
function standIn(resolved) {
  /** @type {object | undefined} */
  let real;
  /** @returns {object} */
  const load = () => {
    if (real === undefined) {
      delete require.cache[resolved];
      real = /** @type {object} */ (require(resolved));
    }
    return real;
  };
  const exports = new Proxy(Object.create(null), {
    // TypeScript's `import * as x` helper copies a CommonJS module's keys at once unless it says
    // `__esModule`; saying so keeps it lazy, and every later `x.name` reads the real export.
    // TypeScript's `import x from` helper then returns the stand-in itself rather than `{ default:
    // module }`, so a `default` the module lacks is the module, as that wrapper would have given.
    get: (_target, key) => {
      if (key === "__esModule" && real === undefined) return true;
      const loaded = load();
      if (key === "default" && !Reflect.has(Object(loaded), "default")) return loaded;
      return Reflect.get(loaded, key);
    },
    has: (_target, key) => Reflect.has(load(), key),
    set: (_target, key, value) => Reflect.set(load(), key, value),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(load(), key);
      // A proxy may not report a property its (empty) target lacks as non-configurable.
      return descriptor && { ...descriptor, configurable: true };
    },
  });
  const module = new Module(resolved);
  module.filename = resolved;
  module.loaded = true;
  module.exports = exports;
  return module;
}

module.exports = { deferPulumiModules };

// Preloaded (`node --require`), there is no main module yet, and the script about to run is
// @pulumi/pulumi's run harness; required by the launcher, the launcher is the main module.
if (require.main === undefined && process.argv[1]) deferPulumiModules(process.argv[1]);
