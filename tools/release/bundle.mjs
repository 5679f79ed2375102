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
 * Bundles the plugin into `outfile`, with the release's facts baked in (provider/native/release.ts):
 * the manifest's, which the bundle cannot read at run time, and the release's own, when it has them.
 * @param {{ outfile: string, pluginDownloadURL?: string, repository?: string }} options
 */
export async function bundlePlugin({ outfile, pluginDownloadURL, repository }) {
  const { version, license, keywords, author } = JSON.parse(
    fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"),
  );
  /** @type {import("../../provider/native/release.js").ReleaseInfo} */
  const release = {
    version,
    license,
    keywords,
    author,
    ...(pluginDownloadURL ? { pluginDownloadURL } : {}),
    ...(repository ? { repository } : {}),
  };
  const result = await esbuild.build({
    entryPoints: [path.join(repoRoot, "provider", "native", "standalone.ts")],
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
    plugins: [leaveOut],
    define: { PULUMI_PROXY_RELEASE: JSON.stringify(release) },
    logLevel: "silent",
  });
  // A warning (a require esbuild cannot follow, say) is a module the plugin would miss at run time.
  if (result.warnings.length > 0) {
    throw new Error(`bundling the plugin: ${result.warnings.map((warning) => warning.text).join("; ")}`);
  }
  return outfile;
}
