import fs from "node:fs";
import path from "node:path";
import { packageVersion } from "../../provider/native/version";
import { type CliCommand, usageLines } from "../command";

const SYNOPSIS = ["pulumi-proxy sdk python | go"];

const usage = () => `${usageLines(SYNOPSIS)}

Prints the path of one of the native provider's SDKs inside this installed package.

  python  a wheel, for pip:  pip install "$(npx pulumi-proxy sdk python)"
  go      the module example.com/pulumi-proxy/sdk/go, for a replace directive in your go.mod:
          go mod edit -replace=example.com/pulumi-proxy/sdk/go="$(npx pulumi-proxy sdk go)" \\
            -require=example.com/pulumi-proxy/sdk/go@v${packageVersion()}
          pulumi install      # go mod tidy: the go.sum entries and the Pulumi SDK it names

Node programs need no install: they import the SDK from this package as \`pulumi-proxy/native\`.
Every SDK needs the provider plugin: \`npx pulumi-proxy provider install\`.`;

/** The built SDKs sit beside the CLI in dist/: dist/native-sdk/<language>. */
const SDK_ROOT = path.resolve(__dirname, "..", "..", "native-sdk");

export function sdkCommand(argv: string[]): number {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  if (argv.length !== 1 || !["python", "go"].includes(argv[0] ?? "")) {
    process.stderr.write(`pulumi-proxy sdk: expected \`python\` or \`go\`, got "${argv.join(" ")}"\n\n${usage()}\n`);
    return 1;
  }
  if (argv[0] === "go") {
    process.stdout.write(`${path.join(SDK_ROOT, "go")}\n`);
    return 0;
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

export const command: CliCommand = {
  name: "sdk",
  summary: "where the native provider's Python wheel or Go module is, for pip or go.mod",
  usage: SYNOPSIS,
  run: sdkCommand,
};
