// Preloaded (`NODE_OPTIONS=--require`) into every Node process the suite starts: the programs, the
// dynamic and native providers, the CLI, npm and tsc. A V8 code cache for CommonJS modules, like
// Node 22's module.enableCompileCache(), which Node 20 lacks.
//
// Why: the suite is bound by CPU, and most of a short-lived Node process's CPU is compiling the
// same modules again (@pulumi/pulumi, grpc-js, typescript, this package's dist): about 0.1 s to
// 0.3 s per process, over a thousand processes a run. Behaviour is Node's: the same wrapper, the
// same `require`, the same file names in stack traces; only the compilation is cached.
//
// How: each module's compiled code is kept in PULUMI_PROXY_CODE_CACHE_DIR under the hash of its
// path and source, written after the process has run it (so it holds the functions compiled
// lazily too), through a temporary file renamed into place, so that concurrent processes never
// read half a file. V8 rejects a cache that does not fit its source or flags; the module is then
// compiled as usual and its cache written anew.
"use strict";

const crypto = require("node:crypto");
const fs = require("node:fs");
const Module = require("node:module");
const path = require("node:path");
const vm = require("node:vm");

const directory = process.env.PULUMI_PROXY_CODE_CACHE_DIR ?? "";

/**
 * Node's CommonJS loader as lib/internal/modules/cjs/loader.js defines it; its types hide these.
 * @type {{ _compile: (this: Module, content: string, filename: string, format?: string) => unknown } & Module}
 */
const loader = /** @type {any} */ (Module.prototype);
/** @type {{ _resolveFilename: Function, _resolveLookupPaths: Function, _extensions: object, _cache: object }} */
const internals = /** @type {any} */ (Module);

/** Small modules are left to Node: the cache pays on large ones, and fewer files keep its folder small. */
const MIN_SOURCE_LENGTH = 2048;

/**
 * A dynamic `import()`, which a vm.Script can run only with an import callback, and Node 20 loses
 * that callback when V8 restores the script from a cache (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING, seen
 * in npm and in Pulumi's run harness): such modules compile Node's way. An `import(` in a string
 * matches too (typescript.js has one), which costs only the cache; so does one in eval'd code, which
 * would run under the evaluating script's callback.
 */
const DYNAMIC_IMPORT = /(?<![\w$.'"`])import\s*\(/;

/** @type {{ file: string, script: vm.Script }[]} */
const unsaved = [];
/** @type {NodeJS.Timeout | undefined} */
let saveTimer;

function save() {
  clearTimeout(saveTimer);
  for (const { file, script } of unsaved.splice(0)) {
    try {
      const partial = `${file}.${process.pid}.partial`;
      fs.writeFileSync(partial, script.createCachedData());
      fs.renameSync(partial, file);
    } catch {
      // A full disk or a removed folder costs only the cache.
    }
  }
}

/**
 * Node's own `require` for a module (lib/internal/modules/helpers.js, makeRequireFunction).
 * @param {Module} mod
 */
function requireFor(mod) {
  /** @type {any} */
  const require = (/** @type {string} */ id) => mod.require(id);
  require.resolve = (/** @type {string} */ request, /** @type {unknown} */ options) =>
    internals._resolveFilename(request, mod, false, options);
  require.resolve.paths = (/** @type {string} */ request) => internals._resolveLookupPaths(request, mod);
  require.main = process.mainModule;
  require.extensions = internals._extensions;
  require.cache = internals._cache;
  return require;
}

/**
 * The module's wrapper function, from the cache when it holds one for this source.
 * @param {string} content @param {string} filename @returns {Function}
 */
function compile(content, filename) {
  const key = crypto.createHash("sha256").update(filename).update("\0").update(content).digest("hex");
  const file = path.join(directory, key.slice(0, 40));
  let cachedData;
  try {
    cachedData = fs.readFileSync(file);
  } catch {}
  // A shebang is valid only at the very start of a script, which the wrapper no longer is.
  const source = content.startsWith("#!") ? `//${content.slice(2)}` : content;
  const script = new vm.Script(Module.wrap(source), { filename, cachedData });
  if (cachedData === undefined || script.cachedDataRejected) {
    unsaved.push({ file, script });
    clearTimeout(saveTimer);
    // Written once the process has been quiet for a while too: a provider is often killed, not ended.
    saveTimer = setTimeout(save, 2000).unref();
  }
  return script.runInThisContext({ displayErrors: true });
}

if (directory) {
  fs.mkdirSync(directory, { recursive: true });
  const original = loader._compile;
  loader._compile = function compileWithCache(content, filename, format) {
    if (format === "module" || content.length < MIN_SOURCE_LENGTH || DYNAMIC_IMPORT.test(content)) {
      return original.call(this, content, filename, format);
    }
    let wrapper;
    try {
      wrapper = compile(content, filename);
    } catch {
      // ES module syntax in a .js file, or an error Node reports better: Node's own path decides.
      return original.call(this, content, filename, format);
    }
    return wrapper.call(this.exports, this.exports, requireFor(this), this, filename, path.dirname(filename));
  };
  process.once("exit", save);
}
