// Preloaded (`node --require`) by tools/language-host into every program it runs, before
// @pulumi/pulumi's run harness.
//
// Why: the harness reports an uncaught error with util.inspect(err, { colors: true }). Node's
// markNodeModules, which colours the package name of each `node_modules/<package>` frame, never
// ends on a frame whose package name is not followed by a path separator (nodejs/node#64011, fixed
// by #64022, still there in Node 20.20.2). @pulumi/pulumi's own source maps produce such frames:
// resource.js maps to `node_modules/@pulumi/resource.ts`, output.js to `.../@pulumi/output.ts`. A
// JavaScript program that throws at its top, or any program whose `apply` throws, has one within
// its first ten frames, so the report grows a string until V8's length limit (over 3 GB and a
// minute per call, and the harness calls it twice) and `pulumi preview` looks hung.
//
// The guard changes one thing: when colours are asked for and the plain rendering holds a line
// that markNodeModules would loop on, the plain rendering is returned. Every other call is Node's.
"use strict";

const util = require("node:util");

const SEPARATORS = new Set(["/", "\\"]);

/** Whether Node's markNodeModules scan (lib/internal/util/inspect.js) would loop on this line. @param {string} line */
function markNodeModulesLoops(line) {
  let searchFrom = 0;
  for (;;) {
    const at = line.indexOf("node_modules", searchFrom);
    if (at === -1) return false;
    const separator = line.charAt(at - 1);
    if (!SEPARATORS.has(separator) || !SEPARATORS.has(line.charAt(at + 12))) {
      searchFrom = at + 1;
      continue;
    }
    const moduleStart = at + 13;
    let moduleEnd = line.indexOf(separator, moduleStart);
    if (moduleEnd !== -1 && line.charAt(moduleStart) === "@") moduleEnd = line.indexOf(separator, moduleEnd + 1);
    if (moduleEnd === -1) return true;
    searchFrom = moduleEnd;
  }
}

/**
 * The options for the same call without colours, or undefined when the call asks for none.
 * @param {unknown[]} args @returns {util.InspectOptions | undefined}
 */
function withoutColors(args) {
  const options = args[1];
  if (options !== null && typeof options === "object") {
    return /** @type {util.InspectOptions} */ (options).colors ? { ...options, colors: false } : undefined;
  }
  // The legacy form: inspect(value, showHidden, depth, colors).
  return args[3] ? { showHidden: Boolean(options), depth: /** @type {number} */ (args[2]), colors: false } : undefined;
}

const nodeInspect = util.inspect;

/** @this {unknown} @param {unknown[]} args @returns {string} */
function inspect(...args) {
  const plainOptions = withoutColors(args);
  if (plainOptions !== undefined && args[0] !== null && typeof args[0] === "object") {
    const plain = nodeInspect(args[0], plainOptions);
    if (plain.split("\n").some(markNodeModulesLoops)) return plain;
  }
  return Reflect.apply(nodeInspect, this, args);
}

// util.inspect.custom, .colors, .styles and .defaultOptions stay reachable through the wrapper.
for (const key of Reflect.ownKeys(nodeInspect)) {
  if (key !== "length" && key !== "name" && key !== "prototype") {
    Object.defineProperty(
      inspect,
      key,
      /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(nodeInspect, key)),
    );
  }
}
util.inspect = /** @type {typeof util.inspect} */ (inspect);

module.exports = { markNodeModulesLoops };
