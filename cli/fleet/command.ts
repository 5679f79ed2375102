import { parseArgs } from "node:util";
import { type CliCommand, usageLines } from "../command";
import { ENVIRONMENT_USAGE, parseOrExplain, UsageError } from "../stack";
import { textTable } from "../table";
import { operatorStacks, yamlStream } from "./manifests";
import { type FleetOp, runFleet, type ShardResult } from "./run";
import { type FleetSpec, loadFleet, type Shard, shardsOf } from "./spec";
import { fleetWorkspace } from "./workspace";

const SYNOPSIS = [
  "pulumi-proxy fleet up|keys|refresh|destroy|prune --fleet <file or dir> [--shard <customer>]… [--json]",
  "pulumi-proxy fleet shards --fleet <file or dir>          the shards as a JSON array (a CI matrix)",
  `pulumi-proxy fleet operator --fleet <file or dir> --repo <git url> --backend <url> --api-url <url>
                                   [--branch main] [--repo-dir <dir>] [--namespace <ns>]   Stack manifests`,
];

export const FLEET_USAGE = `${usageLines(SYNOPSIS)}

Runs one stack per customer of the fleet's users file, side by side (\`concurrency\` in the fleet
file), each with its own API key holding only proxy-users:read, proxy-users:write and limits:write:
  up       mints each stack's key (or rotates it when due, \`keys.rotateAfterDays\`), stores it as the
           stack's secret config proxy:apiKey, then \`pulumi up\`. Without --shard, also prunes.
  keys     the keys alone, as \`up\` does them, no deployment (a CI job that commits the settings files)
  prune    destroys the stacks of customers no longer in the users file, revokes their keys, removes them
  refresh  \`pulumi refresh\` of every stack
  destroy  destroys every stack, revokes its key and removes the stack
One stack failing does not stop the others; a summary lists each stack's result.

  --fleet <path>       the fleet file (fleet.json), or the folder holding it
  --shard <customer>   only this customer's stack (repeatable); what one CI matrix job runs
  --json               the summary as JSON on stdout
  --pulumi-root <dir>  use <dir>/bin/pulumi instead of \`pulumi\` on PATH

The admin key that mints the stacks' keys: PROXY_API_URL and PROXY_API_KEY (keys:write and the three
scopes above). ${ENVIRONMENT_USAGE}

Exit codes: 0 every stack succeeded, 1 a stack failed or an error.`;

const OPS = ["up", "keys", "refresh", "destroy", "prune"] as const;

function summaryTable(results: ShardResult[]): string {
  const changes = (result: ShardResult) =>
    Object.entries(result.changes)
      .map(([op, count]) => `${op} ${count}`)
      .join(", ") || "no changes";
  const rows = [
    ["STACK", "USERS", "KEY", "RESULT", "SECONDS", "CHANGES"],
    ...results.map((result) => [
      result.stack,
      String(result.users),
      result.key,
      result.outcome,
      result.seconds.toFixed(1),
      result.error ? `error: ${result.error.split("\n").join(" | ")}` : changes(result),
    ]),
  ];
  const failed = results.filter((result) => result.outcome === "failed").length;
  return [...textTable(rows), "", `${results.length} stack${results.length === 1 ? "" : "s"}, ${failed} failed.`].join(
    "\n",
  );
}

function parseFleetArgs(argv: string[]) {
  return parseOrExplain(() =>
    parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        fleet: { type: "string" },
        shard: { type: "string", multiple: true },
        json: { type: "boolean" },
        "pulumi-root": { type: "string" },
        repo: { type: "string" },
        branch: { type: "string" },
        "repo-dir": { type: "string" },
        backend: { type: "string" },
        "api-url": { type: "string" },
        namespace: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }),
  );
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

async function runOp(
  op: FleetOp | "prune",
  values: ReturnType<typeof parseFleetArgs>["values"],
  spec: FleetSpec,
  shards: Shard[],
) {
  const unknown = (values.shard ?? []).filter((name) => !shards.some((shard) => shard.stack === name));
  if (unknown.length > 0) throw new UsageError(`--shard ${unknown[0]}: no customer of that name in the users file`);
  const fleet = await fleetWorkspace(spec, values["pulumi-root"]);
  const only = values.shard ?? (op === "prune" ? [] : undefined);
  // Without --shard, `up` and `destroy` also cover the stacks of customers gone from the users file.
  const prune = op === "prune" || ((op === "up" || op === "destroy") && !values.shard);
  const results = await runFleet(fleet, spec, shards, { op: op === "prune" ? "up" : op, only, prune });
  process.stdout.write(
    `${values.json ? JSON.stringify({ version: 1, op, stacks: results }, null, 2) : summaryTable(results)}\n`,
  );
  return results.some((result) => result.outcome === "failed") ? 1 : 0;
}

/** `pulumi-proxy fleet …`. */
export async function fleetCommand(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseFleetArgs(argv);
    const [op] = positionals;
    if (values.help || !op) {
      process.stdout.write(`${FLEET_USAGE}\n`);
      return values.help ? 0 : 1;
    }
    const spec = loadFleet(required(values.fleet, "--fleet"));
    const shards = shardsOf(spec);
    if (op === "shards") {
      process.stdout.write(`${JSON.stringify(shards.map((shard) => shard.stack))}\n`);
      return 0;
    }
    if (op === "operator") {
      const manifests = operatorStacks(spec, shards, {
        repo: required(values.repo, "--repo"),
        backend: required(values.backend, "--backend"),
        apiUrl: required(values["api-url"], "--api-url"),
        branch: values.branch ?? "main",
        repoDir: values["repo-dir"] ?? ".",
        passphraseSecret: `${spec.keys.prefix}-passphrase`,
        resyncSeconds: 3600,
        ...(values.namespace ? { namespace: values.namespace } : {}),
      });
      process.stdout.write(yamlStream(manifests));
      return 0;
    }
    if (!(OPS as readonly string[]).includes(op)) throw new UsageError(`unknown fleet command "${op}"`);
    return await runOp(op as FleetOp | "prune", values, spec, shards);
  } catch (error) {
    process.stderr.write(`pulumi-proxy fleet: ${error instanceof Error ? error.message : String(error)}\n`);
    if (error instanceof UsageError) process.stderr.write(`\n${FLEET_USAGE}\n`);
    return 1;
  }
}

export const command: CliCommand = {
  name: "fleet",
  summary: "one stack per customer, each with its own key: up, keys, refresh, destroy, prune, CI shards",
  usage: SYNOPSIS,
  run: fleetCommand,
};
