// @ts-check
/**
 * `npm test` after set-up: the static checks, then every tier of the suite. The lint runs first (a
 * second, and a formatting slip should not cost a suite run); the type check and the import rules
 * then run beside Vitest instead of before it. Each runs on one core for tens of seconds on a fresh
 * clone (no incremental type-check state), while the suite's start leaves a core free; the suite
 * itself does not read their results. The run fails if any of them fails; their output is printed
 * once they finish, apart from Vitest's.
 *
 *   node tools/test.mjs [vitest arguments]   (what `npm test -- <arguments>` passes on)
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SOURCE_DIRS } from "./build.mjs";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = (/** @type {string} */ file) => path.join(repoRoot, "node_modules", file);

const LINT = [bin("@biomejs/biome/bin/biome"), "check", "."];
const STATIC_CHECKS = [
  [
    bin("typescript/bin/tsc"),
    "--noEmit",
    "-p",
    "tsconfig.json",
    "--incremental",
    "--tsBuildInfoFile",
    ".pulumi-proxy/typecheck.tsbuildinfo",
  ],
  [
    bin("dependency-cruiser/bin/dependency-cruise.mjs"),
    "--config",
    ".dependency-cruiser.cjs",
    // Every folder the build compiles; the generated SDKs follow their generator's rules, not ours.
    ...SOURCE_DIRS.filter((dir) => dir !== "native-sdk"),
  ],
];

/**
 * Runs a Node script; resolves with its exit code and, when `capture`, its output.
 * @param {string[]} argv @param {boolean} capture @returns {Promise<{ code: number, output: string }>}
 */
function run(argv, capture) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argv, {
      cwd: repoRoot,
      stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit",
    });
    let output = "";
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const lint = await run(LINT, false);
if (lint.code !== 0) process.exit(lint.code);

const checks = (async () => {
  const failed = [];
  for (const argv of STATIC_CHECKS) {
    const { code, output } = await run(argv, true);
    if (code !== 0) failed.push({ name: path.basename(argv[0] ?? ""), output });
  }
  return failed;
})();
const suite = await run([bin("vitest/vitest.mjs"), "run", ...process.argv.slice(2)], false);
const failedChecks = await checks;
for (const { name, output } of failedChecks) process.stderr.write(`\n${name} failed:\n${output}\n`);
if (failedChecks.length === 0) process.stderr.write("type check and import rules: passed\n");
process.exit(suite.code !== 0 || failedChecks.length > 0 ? 1 : 0);
