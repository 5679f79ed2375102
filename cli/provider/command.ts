import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { packageVersion } from "../../provider/native/version";
import { type CliCommand, usageLines } from "../command";
import { accountHome } from "../pulumiCli";

const SYNOPSIS = ["pulumi-proxy provider install [--plugins-dir <dir>]"];

const USAGE = `${usageLines(SYNOPSIS)}

Puts the native \`proxy\` resource provider plugin where the Pulumi engine looks for it: the plugin
cache, $PULUMI_HOME/plugins (default ~/.pulumi/plugins), as resource-proxy-v<version>/. The plugin is
copied there whole (one bundled script and its launcher), so it keeps working when this project or
its node_modules is moved or deleted. Nothing is downloaded and PATH is left alone. Run it again
after upgrading pulumi-proxy. Without Node.js, install the release's plugin tarball instead:
pulumi plugin install resource proxy <version> --file pulumi-resource-proxy-v<version>-<os>-<arch>.tar.gz

  --plugins-dir <dir>  another plugin cache (default: $PULUMI_HOME/plugins or ~/.pulumi/plugins)
  --help               this text`;

/** The engine's plugin cache: `$PULUMI_HOME/plugins`, else `~/.pulumi/plugins` (its GetPluginDir). */
export function pluginCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.PULUMI_HOME || path.join(accountHome(), ".pulumi"), "plugins");
}

/** The plugin as one script with everything it requires (tools/release/bundle.mjs), built with the package. */
const BUNDLE = "pulumi-resource-proxy.cjs";

/**
 * The executable the engine starts (`pulumi-resource-proxy`): it runs the bundled script beside it
 * with the `node` on the engine's PATH (the one that runs the program), else the one that ran the
 * install. Nothing it names lies in a project folder.
 */
function launcher(): string {
  const quoted = (text: string) => `'${text.replaceAll("'", `'"'"'`)}'`;
  return [
    "#!/bin/sh",
    "# Written by `pulumi-proxy provider install`: runs the bundled plugin beside it.",
    // The shell's own expansion, not `dirname`: the engine may start plugins with a bare PATH.
    `script="\${0%/*}/${BUNDLE}"`,
    'if command -v node >/dev/null 2>&1; then exec node "$script" "$@"; fi',
    `exec ${quoted(process.execPath)} "$script" "$@"`,
    "",
  ].join("\n");
}

export function installProvider(pluginsDir: string): string {
  const version = packageVersion();
  const dir = path.join(pluginsDir, `resource-proxy-v${version}`);
  const bundle = path.resolve(__dirname, "..", "..", "plugin", BUNDLE);
  if (!fs.existsSync(bundle)) {
    throw new Error(`${bundle} is missing: this copy of pulumi-proxy is not built. Run \`npm run build\` first.`);
  }
  fs.mkdirSync(pluginsDir, { recursive: true });
  // The engine skips a folder whose `.partial` marker exists: it marks an install still under way.
  fs.writeFileSync(`${dir}.partial`, "");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(bundle, path.join(dir, BUNDLE));
  const executable = path.join(dir, "pulumi-resource-proxy");
  fs.writeFileSync(executable, launcher(), { mode: 0o755 });
  fs.chmodSync(executable, 0o755);
  fs.rmSync(`${dir}.partial`, { force: true });
  return executable;
}

export async function providerCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { "plugins-dir": { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals[0] !== "install" || positionals.length > 1) {
    process.stderr.write(`pulumi-proxy provider: expected \`install\`, got "${positionals.join(" ")}"\n\n${USAGE}\n`);
    return 1;
  }
  let executable: string;
  try {
    executable = installProvider(values["plugins-dir"] ?? pluginCacheDir());
  } catch (error) {
    process.stderr.write(`pulumi-proxy provider install: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  process.stdout.write(
    `Installed the proxy resource provider plugin v${packageVersion()}: ${executable}\n` +
      "Programs that declare proxy:index:* resources now use it; the dynamic resources are unchanged.\n",
  );
  return 0;
}

export const command: CliCommand = {
  name: "provider",
  summary: "put the native `proxy` provider plugin where Pulumi finds it",
  usage: SYNOPSIS,
  run: providerCommand,
};
