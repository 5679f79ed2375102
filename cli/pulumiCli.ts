import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PulumiCommand } from "@pulumi/pulumi/automation";

export const PINNED_CLI_VERSION = "3.248.0";

/**
 * The home folder as the Pulumi CLI finds it (Go's user.Current): the account's, from the user
 * database, not $HOME, which Node's os.homedir() would read first. Where they differ (a CI job or a
 * shell that moved HOME), ~/.pulumi and `file://~` mean the account's folder to the CLI, so to us.
 */
export function accountHome(): string {
  const fromDatabase = passwdHome();
  if (fromDatabase) return fromDatabase;
  try {
    return os.userInfo().homedir || os.homedir();
  } catch {
    // No entry in the user database (an arbitrary container uid): the CLI falls back to $HOME too.
    return os.homedir();
  }
}

/**
 * The account's home in /etc/passwd, which Go's os/user reads too. Needed because Bun, which the
 * release's executable runs on, answers os.userInfo().homedir from $HOME: with HOME moved, `recover`
 * looked for locks in the wrong ~/.pulumi and called a locked stack consistent.
 */
function passwdHome(): string | undefined {
  if (typeof process.getuid !== "function") return undefined;
  const uid = String(process.getuid());
  try {
    for (const line of fs.readFileSync("/etc/passwd", "utf8").split("\n")) {
      const fields = line.split(":");
      if (fields[2] === uid && fields[5]) return fields[5];
    }
  } catch {
    // No /etc/passwd (Windows has no getuid; macOS keeps users in Directory Services).
  }
  return undefined;
}

export interface LocatedCli {
  command: PulumiCommand;
  /** Prepended to PATH, so the engine finds the language host and plugins that sit next to the CLI. */
  binDir?: string;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  return (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, name))
    .find(isExecutable);
}

/** The native plugin of this very copy of the package, which its `bin` names `pulumi-resource-proxy`. */
const OWN_PLUGIN = path.resolve(__dirname, "..", "provider", "native", "main.js");

function holdsOwnPlugin(dir: string): boolean {
  try {
    return fs.realpathSync(path.join(dir, "pulumi-resource-proxy")) === fs.realpathSync(OWN_PLUGIN);
  } catch {
    return false;
  }
}

/**
 * PATH for an engine a command starts: the CLI's own bin folder first (its language hosts), then the
 * user's PATH without the folders that hold this package's own `pulumi-resource-proxy`. `npx` (and an
 * npm script) puts the package's node_modules/.bin on PATH; an engine that sees it there prefers it to
 * the plugin `provider install` put in the plugin cache, and warns at every plugin load. The engine
 * a command starts sees what the user's own `pulumi` sees.
 */
export function enginePath(cli: LocatedCli, userPath = process.env.PATH ?? ""): string {
  const kept = userPath.split(path.delimiter).filter((dir) => dir && !holdsOwnPlugin(dir));
  return [...(cli.binDir ? [cli.binDir] : []), ...kept].join(path.delimiter);
}

/**
 * The drift command provisions nothing: it uses the CLI the user already has. An explicit root
 * (`--pulumi-root`, else PULUMI_PROXY_CLI_ROOT) holds `bin/pulumi`; otherwise `pulumi` on PATH.
 */
export async function locatePulumi(explicitRoot: string | undefined): Promise<LocatedCli> {
  const root = explicitRoot ?? process.env.PULUMI_PROXY_CLI_ROOT;
  if (root) {
    // The folder holding bin/pulumi, or that bin folder itself (what `npm run pulumi:provision` prints).
    const installRoot = [path.resolve(root), path.resolve(root, "..")].find((dir) =>
      isExecutable(path.join(dir, "bin", "pulumi")),
    );
    if (!installRoot) {
      throw new Error(
        `no Pulumi CLI at ${path.resolve(root, "bin", "pulumi")}: --pulumi-root (or PULUMI_PROXY_CLI_ROOT) must name the folder that contains bin/pulumi.`,
      );
    }
    return { command: await PulumiCommand.get({ root: installRoot }), binDir: path.join(installRoot, "bin") };
  }
  if (!onPath("pulumi")) {
    throw new Error(
      `no Pulumi CLI found: \`pulumi\` is not on PATH. Install Pulumi CLI v${PINNED_CLI_VERSION} (https://www.pulumi.com/docs/install/) ` +
        "and put it on PATH, or pass --pulumi-root <folder containing bin/pulumi> (or set PULUMI_PROXY_CLI_ROOT). " +
        "In a clone of pulumi-proxy, `npm run pulumi:provision` provisions one and prints its bin folder.",
    );
  }
  return { command: await PulumiCommand.get() };
}
