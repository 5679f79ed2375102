// Preloaded (`NODE_OPTIONS=--require`) into every Node process the suite starts: the programs, the
// dynamic and native providers, the CLI, npm and tsc. A V8 code cache for CommonJS modules, like
// Node 22's module.enableCompileCache(), which Node 20 lacks.
//
// Why: the suite is bound by CPU, and most of a short-lived Node process's CPU is compiling the
// same modules again (@pulumi/pulumi, grpc-js, typescript, this package's dist): about 0.1 s to
// 0.3 s per process, over a thousand processes a run. Behaviour is Node's: the same wrapper, the
// same `require`, the same file names in stack traces; only the compilation is cached.
//
// How: each module's compiled code is kept in PULUMI_PROXY_CODE_CACHE_DIR under the hashes of its
// source and of V8's flags, written once the process has run it (so it holds the functions compiled
// lazily too), through a temporary file renamed into place, so that concurrent processes never
// read half a file. V8 rejects a cache that does not fit its source or flags; the module is then
// compiled as usual and its cache written anew.
"use strict";

const crypto = require("node:crypto");
const fs = require("node:fs");
const Module = require("node:module");
const path = require("node:path");
const v8 = require("node:v8");
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

/** How long after its last compilation a process writes the caches it lacked. */
const SAVE_AFTER_QUIET_MS = 100;

/**
 * A dynamic `import()`, which a vm.Script can run only with an import callback, and Node 20 loses
 * that callback when V8 restores the script from a cache (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING, seen
 * in npm and in Pulumi's run harness): such modules compile Node's way. Three shapes of the word are
 * no import, and each kept a module everybody loads from the cache:
 * - inside a string that opens on its line: typescript.js, which every Pulumi program and provider
 *   loads, has one in a message, and is the largest module they compile (0.17 s each time);
 * - on a comment line (`*`, `/*` or `//` first): undici's JSDoc types, `import('node:stream').Stream`,
 *   kept 39 of its files (0.9 MB) out of every process that talks to the API;
 * - a method named `import` (`async import(options) {`), and a template's text `import('${…}')`: the
 *   Automation API and @pulumi/pulumi's closure messages, in the native plugin's one-file bundle.
 */
const DYNAMIC_IMPORT = /(?<![\w$.'"`])import\s*\(/g;

/**
 * Whether `index` is inside a quoted string that opens on its own line (escapes honoured; comments are not parsed).
 * @param {string} content @param {number} index
 */
function insideString(content, index) {
  let quote = "";
  for (let at = content.lastIndexOf("\n", index) + 1; at < index; at++) {
    const char = content[at];
    if (quote && char === "\\") at++;
    else if (quote && char === quote) quote = "";
    else if (!quote && (char === '"' || char === "'" || char === "`")) quote = char;
  }
  return quote !== "";
}

/** A line that is all comment: what precedes `index` on it starts with `*`, `/*` or `//`. @param {string} content @param {number} index */
const onCommentLine = (content, index) =>
  /^\s*(\*|\/\*|\/\/)/.test(content.slice(content.lastIndexOf("\n", index) + 1, index));

/** `import(…) {` (a method's definition, never a call) or `import('${` (a template's text). @param {string} content @param {number} index */
const noCall = (content, index) => /^import\s*\((\s*['"]\$\{|[^()]*\)\s*\{)/.test(content.slice(index, index + 200));

/** @param {string} content */
function importsDynamically(content) {
  for (const { index } of content.matchAll(DYNAMIC_IMPORT)) {
    if (!insideString(content, index) && !onCommentLine(content, index) && !noCall(content, index)) return true;
  }
  return false;
}

/**
 * V8 takes a cache only under the flags it was made with, and @pulumi/pulumi changes them while it
 * loads (`--allow-natives-syntax`, runtime/closure/v8.js): a program writes its caches under the new
 * flags, and a provider process, which never sets them, rejected every one of them, every time. So
 * a cache file is named by the source and the flags' hash, which V8 writes into the cache itself
 * (Node 20's V8; were the header to move, caches would only miss, since V8 checks each one).
 */
const FLAG_HASH_BYTES = [12, 16];
/** @param {Buffer} cachedData */
const flagHashOf = (cachedData) => cachedData.subarray(...FLAG_HASH_BYTES).toString("hex");

/** @type {string | undefined} The flags' hash now, from a tiny script's cache; forgotten when the flags change. */
let currentFlagHash;
const currentFlags = () => {
  currentFlagHash ??= flagHashOf(new vm.Script("0").createCachedData());
  return currentFlagHash;
};
const setFlagsFromString = v8.setFlagsFromString;
v8.setFlagsFromString = (/** @type {string} */ flags) => {
  // What compiled so far is cached under the flags it compiled with, which later runs start with.
  save();
  currentFlagHash = undefined;
  setFlagsFromString(flags);
};

/** @param {string} sourceKey @param {string} flagHash */
const cacheFile = (sourceKey, flagHash) => path.join(directory, `${sourceKey}-${flagHash}`);

/** @type {{ sourceKey: string, script: vm.Script }[]} */
const unsaved = [];
/** @type {NodeJS.Timeout | undefined} */
let saveTimer;

function save() {
  clearTimeout(saveTimer);
  for (const { sourceKey, script } of unsaved.splice(0)) {
    try {
      const cachedData = script.createCachedData();
      const file = cacheFile(sourceKey, flagHashOf(cachedData));
      const partial = `${file}.${process.pid}.partial`;
      fs.writeFileSync(partial, cachedData);
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
  // The source alone: V8 checks a cache against its source, not its file name, so the same package
  // installed in another folder (every test that installs the tarball into a temp folder) hits too.
  const sourceKey = crypto.createHash("sha256").update(content).digest("hex").slice(0, 40);
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile(sourceKey, currentFlags()));
  } catch {}
  // A shebang is valid only at the very start of a script, which the wrapper no longer is.
  const source = content.startsWith("#!") ? `//${content.slice(2)}` : content;
  const script = new vm.Script(Module.wrap(source), { filename, cachedData });
  if (cachedData === undefined || script.cachedDataRejected) {
    unsaved.push({ sourceKey, script });
    clearTimeout(saveTimer);
    // Written once the process has been quiet for a moment too: the engine kills its providers
    // (no exit handler runs) about a second after they have loaded.
    saveTimer = setTimeout(save, SAVE_AFTER_QUIET_MS).unref();
  }
  return script.runInThisContext({ displayErrors: true });
}

if (directory) {
  fs.mkdirSync(directory, { recursive: true });
  const original = loader._compile;
  loader._compile = function compileWithCache(content, filename, format) {
    if (format === "module" || content.length < MIN_SOURCE_LENGTH || importsDynamically(content)) {
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
