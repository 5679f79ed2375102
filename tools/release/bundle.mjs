// @ts-check
/**
 * The native plugin as one script: esbuild bundles its entry (provider/native/standalone.ts, straight
 * from the TypeScript sources, so a release need not wait for tsc) with everything it requires, so
 * the script runs with no node_modules beside it,
 * compiled into each platform's executable (compile.mjs) or run by `node` from the plugin cache
 * (`pulumi-proxy provider install`).
 *
 * @pulumi/pulumi requires `typescript` (closure serialization) and `@npmcli/arborist` (code paths of
 * a program) when it loads; a provider process never calls either, and together they are 13 MB of the
 * bundle and most of its start. They are replaced by stand-ins that fail, naming the module, if
 * anything ever uses them. Nothing else in what the plugin loads reads a file at run time: the
 * protobuf stubs are generated JavaScript and the SDK's version is a constant.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const LEFT_OUT = ["typescript", "@npmcli/arborist"];

/** @type {esbuild.Plugin} */
const leaveOut = {
  name: "leave-out",
  setup(build) {
    const filter = new RegExp(`^(${LEFT_OUT.map((name) => name.replace(/[/@]/g, "\\$&")).join("|")})$`);
    build.onResolve({ filter }, (args) => ({ path: args.path, namespace: "left-out" }));
    build.onLoad({ filter: /.*/, namespace: "left-out" }, (args) => ({
      loader: "js",
      contents: `const why = ${JSON.stringify(`pulumi-resource-proxy: ${args.path} is not part of the self-contained plugin`)};
module.exports = new Proxy({}, {
  // TypeScript's import helper asks this first; saying yes keeps it from copying every key.
  get: (_target, key) => { if (key === "__esModule") return true; throw new Error(why + " (used: " + String(key) + ")"); },
  has: () => { throw new Error(why); },
  ownKeys: () => { throw new Error(why); },
});
`,
    }));
  },
};

/**
 * The release executable's entry (cli/executable.ts) holds the tool besides the plugin: there every
 * module but the entry is a module the entry requires, so a `require.main === module` of theirs (the
 * tool's and the server's `node dist/…` starts) must not run it; and the tool's import of
 * cli/deferModules.ts, which defers what this bundle leaves out, resolves @pulumi/pulumi's path, which
 * a bundle has none of.
 * @type {esbuild.Plugin}
 */
const oneEntry = {
  name: "one-entry",
  setup(build) {
    build.onResolve({ filter: /\/deferModules$/ }, (args) => ({ path: args.path, namespace: "deferred-nothing" }));
    build.onLoad({ filter: /.*/, namespace: "deferred-nothing" }, () => ({ loader: "js", contents: "" }));
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const source = fs.readFileSync(args.path, "utf8");
      if (!source.includes("require.main === module")) return undefined;
      return { loader: "ts", contents: source.replaceAll("require.main === module", "false") };
    });
  },
};

/** The entries a bundle can start from. */
export const ENTRIES = {
  /** The plugin alone: what `pulumi-proxy provider install` runs with node. */
  plugin: path.join(repoRoot, "provider", "native", "standalone.ts"),
  /** The plugin and the tool, chosen by the first argument: each platform's release executable. */
  executable: path.join(repoRoot, "cli", "executable.ts"),
};

/**
 * Bundles the plugin into `outfile`, with the release's facts baked in (provider/native/release.ts):
 * the manifest's, which the bundle cannot read at run time, and the release's own, when it has them.
 * @param {{ outfile: string, pluginDownloadURL?: string, repository?: string, entry?: keyof typeof ENTRIES }} options
 */
export async function bundlePlugin({ outfile, pluginDownloadURL, repository, entry = "plugin" }) {
  const { version, license, keywords, author } = JSON.parse(
    fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"),
  );
  // provider/native/release.ts's ReleaseInfo, stated there alone: tools/ imports no room of the
  // product, not even for a type. test/release/release.test.ts reads it back from what this bundle
  // serves: the SDKs generated from it carry its version, license, keywords, download URL and
  // repository (all but `author`, the schema's publisher).
  const release = {
    version,
    license,
    keywords,
    author,
    ...(pluginDownloadURL ? { pluginDownloadURL } : {}),
    ...(repository ? { repository } : {}),
  };
  const result = await esbuild.build({
    entryPoints: [ENTRIES[entry]],
    tsconfig: path.join(repoRoot, "tsconfig.json"),
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    // Whitespace and syntax only: names stay, so a stack trace from the plugin still reads.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: "none",
    plugins: entry === "executable" ? [leaveOut, oneEntry] : [leaveOut],
    define: { PULUMI_PROXY_RELEASE: JSON.stringify(release) },
    logLevel: "silent",
  });
  // A warning (a require esbuild cannot follow, say) is a module the plugin would miss at run time.
  if (result.warnings.length > 0) {
    throw new Error(`bundling the plugin: ${result.warnings.map((warning) => warning.text).join("; ")}`);
  }
  return outfile;
}
