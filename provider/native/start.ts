/**
 * One start of `pulumi-resource-proxy`, whichever way it is shipped (main.ts from the package,
 * standalone.ts inside the self-contained release plugin). The engine starts it with its own address
 * as the first argument that is not a flag. The Node SDK's log functions reach the engine through
 * that address, which they read from the environment when first used, so it is set before anything
 * loads the SDK: `beforeSdk` runs then too.
 */
export function startPlugin(beforeSdk: () => void = () => {}): void {
  const engineAddress = process.argv.slice(2).find((arg) => !arg.startsWith("-"));
  if (engineAddress) process.env.PULUMI_NODEJS_ENGINE = engineAddress;

  // A killed engine stops nobody: the plugin exits by itself once the engine stops answering.
  const { watchEngine } = require("pulumi-proxy/engine-watch") as {
    watchEngine(address: string, name: string): boolean;
  };
  if (engineAddress) watchEngine(engineAddress, "pulumi-resource-proxy");
  beforeSdk();

  // Loaded after the address is set (see above); an import would be hoisted above it.
  const { serve } = require("./server") as typeof import("./server");
  serve().catch((error: unknown) => {
    process.stderr.write(
      `pulumi-resource-proxy: cannot serve: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}
