import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { POLICY_PACK_NAME, RULES } from "../../policy";
import { packageVersion } from "../../provider/native/version";
import { type CliCommand, usageLines } from "../command";

const SYNOPSIS = ["pulumi-proxy policy init <dir>"];

const USAGE = `${usageLines(SYNOPSIS)}

Writes a policy pack folder that runs this package's rules (pulumi-proxy/policy) in
\`pulumi preview --policy-pack <dir>\`. Make <dir> inside the Pulumi project that installed
pulumi-proxy: the pack then finds it in the project's node_modules, with nothing to install.
<dir>/policy-config.json holds every rule's level and numbers at their defaults; edit it and pass
it as \`--policy-pack-config <dir>/policy-config.json\`.

  --force   overwrite the files of an existing pack
  --help    this text`;

/** Every rule at its default level and numbers: the file a team edits. */
export function defaultPolicyConfig(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    RULES.map((rule) => [
      rule.name,
      {
        enforcementLevel: rule.enforcementLevel,
        ...Object.fromEntries(Object.entries(rule.config).map(([key, field]) => [key, field.default])),
      },
    ]),
  );
}

function packFiles(): Record<string, string> {
  return {
    "PulumiPolicy.yaml": `runtime: nodejs\ndescription: The proxy service's rules for users, keys and addresses (pulumi-proxy ${packageVersion()}).\n`,
    "package.json": `${JSON.stringify(
      {
        name: `${POLICY_PACK_NAME}-policy`,
        version: "0.1.0",
        private: true,
        main: "index.js",
        // No dependency on pulumi-proxy by name: the registry's package of that name is not this one.
        // The pack finds the project's copy in node_modules; moved out, it gets the tarball installed.
      },
      null,
      2,
    )}\n`,
    "index.js": `// Written by \`pulumi-proxy policy init\`: the rules and their defaults live in pulumi-proxy/policy.\nrequire("pulumi-proxy/policy").proxyPolicyPack();\n`,
    "policy-config.json": `${JSON.stringify(defaultPolicyConfig(), null, 2)}\n`,
  };
}

export function policyCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { force: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help || sub === "--help" || sub === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (sub !== "init" || positionals.length !== 1) {
    process.stderr.write(
      `pulumi-proxy policy: ${sub === "init" ? "one folder is required" : `unknown command "${sub ?? ""}"`}\n\n${USAGE}\n`,
    );
    return 1;
  }
  const dir = path.resolve(positionals[0] as string);
  const files = packFiles();
  const existing = Object.keys(files).filter((file) => fs.existsSync(path.join(dir, file)));
  if (existing.length > 0 && !values.force) {
    process.stderr.write(
      `pulumi-proxy policy init: ${dir} already holds ${existing.join(", ")}; pass --force to overwrite them.\n`,
    );
    return 1;
  }
  fs.mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  const relative = path.relative(process.cwd(), dir) || ".";
  process.stdout.write(
    `Wrote a policy pack to ${relative}. Run it with:\n  pulumi preview --policy-pack ${relative} --policy-pack-config ${path.join(relative, "policy-config.json")}\n`,
  );
  return 0;
}

export const command: CliCommand = {
  name: "policy",
  summary: "write a policy pack folder for `pulumi preview --policy-pack`, every rule at its defaults",
  usage: SYNOPSIS,
  run: policyCommand,
};
