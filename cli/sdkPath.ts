import fs from "node:fs";
import path from "node:path";

const USAGE = `usage: pulumi-proxy sdk python

Prints the path of the native provider's Python SDK, a wheel inside this installed package, for pip:

  pip install "$(npx pulumi-proxy sdk python)"

Node programs need no install: they import the SDK from this package as \`pulumi-proxy/native\`.
Either SDK needs the provider plugin: \`npx pulumi-proxy provider install\`.`;

/** The built SDKs sit beside the CLI in dist/: dist/native-sdk/<language>. */
const SDK_ROOT = path.resolve(__dirname, "..", "native-sdk");

export function sdkCommand(argv: string[]): number {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (argv.length !== 1 || argv[0] !== "python") {
    process.stderr.write(`pulumi-proxy sdk: expected \`python\`, got "${argv.join(" ")}"\n\n${USAGE}\n`);
    return 1;
  }
  const dir = path.join(SDK_ROOT, "python");
  const wheel = fs.existsSync(dir) ? fs.readdirSync(dir).find((name) => name.endsWith(".whl")) : undefined;
  if (!wheel) {
    process.stderr.write(
      `pulumi-proxy sdk: this copy of pulumi-proxy has no Python wheel in ${dir}. ` +
        "Packages from npm pack carry it; in a checkout, run `npm run build` with python3 and pip on PATH.\n",
    );
    return 1;
  }
  process.stdout.write(`${path.join(dir, wheel)}\n`);
  return 0;
}
