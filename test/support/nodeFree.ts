import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { inject } from "vitest";

/** Node.js and the commands that come with it: what a machine without Node.js lacks. */
const NODE_COMMANDS = new Set(["node", "nodejs", "npm", "npx", "corepack"]);

/** The machine's own commands, where Debian puts them. */
const SYSTEM_DIRS = ["/usr/bin", "/bin"];

/**
 * The Python interpreter itself: a version manager's `python3` is a script that finds the interpreter
 * on PATH, which a PATH of linked commands would not hold.
 */
export function pythonInterpreter(): string {
  return spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).stdout.trim();
}

/**
 * A PATH as on a machine without Node.js: the Pulumi CLI and its language hosts, `~/.local/bin`
 * (which Debian's and Ubuntu's profiles put on PATH), and a folder under `root` linking every
 * system command but Node's, with the Python interpreter and Go this machine runs Python and Go
 * programs with. Node sits in /usr/bin here, so PATH cannot simply leave a folder out.
 */
export function pathWithoutNode(root: string, home: string): string {
  const commands = path.join(root, "commands-without-node");
  fs.mkdirSync(commands, { recursive: true });
  const linked = new Set<string>();
  const link = (name: string, target: string) => {
    if (linked.has(name) || NODE_COMMANDS.has(name)) return;
    fs.symlinkSync(target, path.join(commands, name));
    linked.add(name);
  };
  const python = pythonInterpreter();
  if (python) link("python3", python);
  const go = spawnSync("go", ["env", "GOROOT"], { encoding: "utf8" });
  if (go.stdout.trim()) link("go", path.join(go.stdout.trim(), "bin", "go"));
  for (const dir of SYSTEM_DIRS) {
    for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) link(name, path.join(dir, name));
  }
  return [inject("pulumiBinDir"), path.join(home, ".local", "bin"), commands].join(path.delimiter);
}

/**
 * A temporary folder (TMPDIR) inside `root`, which the test removes, for the processes of one user's
 * session. Why: Pulumi 3.248's engine, when it fetches a plugin for a Go program itself, leaves the
 * download in the temporary folder (`pulumi-plugin-tar…`, 57 MB for this plugin), and the machine's
 * /tmp kept two of them from every run of the suite.
 */
export function ownTmpDir(root: string): string {
  const dir = path.join(root, "tmp");
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
