// @ts-check
/**
 * The Pulumi CLI built from the Go modules loads two copies of a password-strength checker
 * (github.com/nbutton23/zxcvbn-go and github.com/ccojocar/zxcvbn-go) at every start: their package
 * initialisers parse about 20 MB of word lists, 85 ms of CPU of the 150 ms a `pulumi version` takes.
 * The CLI consults them only when `config set` (or `esc env set`) weighs whether a plain value under
 * a key named like a secret looks like one, yet pays for them in each of the thousand CLI calls of a
 * test run.
 *
 * So the build uses copies of the two modules in which the lists are parsed at their first use
 * instead of at start: the same lists, the same matchers, the same scores. The copies are made from
 * the module cache at build time and edited by exact text; an upstream change to the edited lines
 * stops the build rather than building something else. An official binary (PATH, installer) is used
 * as it is.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** Raised when the edits change: provisioning rebuilds a CLI whose stamp names another recipe. */
export const LAZY_ZXCVBN_RECIPE = "lazy-zxcvbn-1";

const MODULES = ["github.com/nbutton23/zxcvbn-go", "github.com/ccojocar/zxcvbn-go"];

/** The module cache's files are read-only; the copy is edited. @param {string} dir */
function makeWritable(dir) {
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) makeWritable(file);
    else fs.chmodSync(file, 0o644);
  }
}

/**
 * `text` with `from` replaced by `to`, exactly once.
 * @param {string} file @param {string} text @param {string | RegExp} from @param {string} to
 */
function replaceOnce(file, text, from, to) {
  const found = typeof from === "string" ? text.split(from).length - 1 : (text.match(from) ?? []).length;
  if (found !== 1) {
    throw new Error(`${file}: expected the upstream text ${String(from)} once, found it ${found} times`);
  }
  return text.replace(from, () => to);
}

/** @param {string} file @param {(text: string) => string} edit */
function editFile(file, edit) {
  fs.writeFileSync(file, edit(fs.readFileSync(file, "utf8")));
}

/**
 * frequency: the word lists load on Load(), once. matching: Omnimatch (the checker's one entry)
 * already builds its matchers when they are missing; it now does so once, after Load().
 * @param {string} dir
 */
function makeLazy(dir) {
  const frequency = path.join(dir, "frequency", "frequency.go");
  editFile(frequency, (text) => {
    const imported = replaceOnce(
      frequency,
      text,
      'import (\n\t"encoding/json"\n',
      'import (\n\t"encoding/json"\n\t"sync"\n',
    );
    return replaceOnce(
      frequency,
      imported,
      "func init() {",
      "var loadOnce sync.Once\n\n// Load fills Lists, once: at the first password checked, not at start.\nfunc Load() { loadOnce.Do(load) }\n\nfunc load() {",
    );
  });
  const matching = path.join(dir, "matching", "matching.go");
  editFile(matching, (text) => {
    let edited = replaceOnce(matching, text, 'import (\n\t"sort"\n', 'import (\n\t"sort"\n\t"sync"\n');
    edited = replaceOnce(matching, edited, "func init() {\n\tloadFrequencyList()\n}\n", "var loadOnce sync.Once\n");
    edited = replaceOnce(
      matching,
      edited,
      /\tif dictionaryMatchers == nil \|\| adjacencyGraphs == nil \{\n\t\tloadFrequencyList\(\)\n\t\}\n/,
      "\tloadOnce.Do(loadFrequencyList)\n",
    );
    return replaceOnce(
      matching,
      edited,
      "func loadFrequencyList() {\n",
      "func loadFrequencyList() {\n\tfrequency.Load()\n",
    );
  });
}

/**
 * Copies the two modules the build resolves into `<buildDir>/lazy-zxcvbn/`, edits them, and points
 * the build's go.mod at the copies.
 * @param {string} buildDir the throwaway module the CLI is built in @param {Record<string, string>} env
 */
export function useLazyZxcvbn(buildDir, env) {
  const root = path.join(buildDir, "lazy-zxcvbn");
  fs.rmSync(root, { recursive: true, force: true });
  for (const module of MODULES) {
    // The version the build resolves, with the replacement of an earlier build dropped first.
    execFileSync("go", ["mod", "edit", `-dropreplace=${module}`], { cwd: buildDir, env });
    let source;
    try {
      source = execFileSync("go", ["list", "-m", "-f", "{{.Dir}}", module], {
        cwd: buildDir,
        env,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim();
    } catch {
      continue; // A CLI version that no longer links the module: nothing to make lazy.
    }
    const copy = path.join(root, module.split("/")[1] ?? module);
    fs.cpSync(source, copy, { recursive: true });
    makeWritable(copy);
    makeLazy(copy);
    // nbutton23's module predates go.mod; a replacement folder needs one.
    const goMod = path.join(copy, "go.mod");
    if (!fs.existsSync(goMod)) fs.writeFileSync(goMod, `module ${module}\n\ngo 1.18\n`);
    execFileSync("go", ["mod", "edit", `-replace=${module}=./${path.relative(buildDir, copy)}`], {
      cwd: buildDir,
      env,
    });
  }
}
