import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { startReferenceServer } from "../server";
import { BENCH_ROOT, REPO_ROOT, timed } from "./harness";
import { loadAverage } from "./report";

/**
 * `npm run bench -- --only fleet`: the goal, 10,000 users in 20 stacks of 500, each stack
 * with its own key, against the reference server at the real 600 requests a minute per key. Runs
 * `pulumi-proxy fleet up`, then `fleet refresh`, then `fleet destroy` as a user does (the command
 * line, the example's program and fleet file), and prints each phase's wall time, requests and 429s
 * against the goals: up under 4 minutes, refresh under 1, destroy under 2.
 */
export const FLEET_GOAL_SHAPE = { customers: 20, usersPerCustomer: 500 };
const GOALS = { up: 240, refresh: 60, destroy: 120 } as const;

/** What the bench's fleet.json sets beyond the users file; a field left out takes the fleet's default. */
export interface FleetSettings {
  concurrency?: number;
  checkpoints?: boolean;
}

export interface FleetFigures {
  phase: "up" | "refresh" | "destroy";
  seconds: number;
  requests: number;
  rateLimited: number;
  failed: number;
  load: string;
}

export type FleetShape = typeof FLEET_GOAL_SHAPE;

function writeFleet(dir: string, shape: FleetShape, settings: FleetSettings): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const example = path.join(REPO_ROOT, "examples", "fleet");
  // package.json too: without one the Node host runs the `main` of the nearest package.json above, the repository's.
  for (const file of ["Pulumi.yaml", "index.ts", "tsconfig.json", "package.json"]) {
    fs.copyFileSync(path.join(example, file), path.join(dir, file));
  }
  const rows = ["customer,name,dailyGb,monthlyGb,enabled"];
  for (let c = 0; c < shape.customers; c++) {
    const customer = `customer-${String(c).padStart(2, "0")}`;
    for (let u = 0; u < shape.usersPerCustomer; u++) rows.push(`${customer},${customer}-u${u},${1 + (u % 5)},100,true`);
  }
  fs.writeFileSync(path.join(dir, "users.csv"), `${rows.join("\n")}\n`);
  fs.writeFileSync(path.join(dir, "fleet.json"), JSON.stringify({ users: "users.csv", ...settings }));
}

function runFleet(op: string, dir: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(REPO_ROOT, "dist", "cli", "main.js"), "fleet", op, "--fleet", dir, "--json"],
      {
        env,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let stdout = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout }));
  });
}

export async function benchFleet(binDir: string, shape: FleetShape, settings: FleetSettings): Promise<FleetFigures[]> {
  // Below the bench's node_modules (installed by the caller, run.ts), so the program loads the package
  // as a user's does (install.ts).
  const root = path.join(BENCH_ROOT, "fleet");
  const dir = path.join(root, "program");
  writeFleet(dir, shape, settings);
  for (const sub of ["home", "backend"]) fs.mkdirSync(path.join(root, sub), { recursive: true });
  const server = await startReferenceServer({ rateLimitPerMinute: 600, balanceCents: 100_000_000 });
  const env = {
    ...process.env,
    PULUMI_HOME: path.join(root, "home"),
    PULUMI_BACKEND_URL: `file://${path.join(root, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: "bench-fleet",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    PROXY_API_URL: server.url,
    PROXY_API_KEY: server.rootKey,
    PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}`,
  };
  const figures: FleetFigures[] = [];
  try {
    for (const phase of ["up", "refresh", "destroy"] as const) {
      server.resetStats();
      const { seconds, result } = await timed(() => runFleet(phase, dir, env));
      type Line = { outcome: string; error?: string; changes: Record<string, number> };
      const stacks = (JSON.parse(result.stdout || "{}").stacks ?? []) as Line[];
      const changes: Record<string, number> = {};
      for (const [op, count] of stacks.flatMap((stack) => Object.entries(stack.changes))) {
        changes[op] = (changes[op] ?? 0) + count;
      }
      const failed = stacks.filter((stack) => stack.outcome === "failed");
      for (const stack of failed) console.error(stack.error);
      const { requests, rateLimited } = server.stats();
      const row = { phase, seconds, requests, rateLimited, failed: failed.length, load: loadAverage() };
      console.log(
        `fleet ${phase.padEnd(8)} ${seconds.toFixed(1)} s, ${stacks.length} stacks (${failed.length} failed), ${requests} requests, ${rateLimited} 429s, ${JSON.stringify(changes)}, ${row.load}`,
      );
      figures.push(row);
    }
    const left = server.control.snapshot();
    if (left.proxyUsers.length > 0 || left.keys.length !== 1)
      throw new Error("fleet destroy left users or keys behind");
  } finally {
    await server.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
  return figures;
}

export function fleetTable(rows: FleetFigures[], shape: FleetShape, label: string): string {
  const goal = (phase: FleetFigures["phase"]) => `< ${GOALS[phase]} s`;
  return [
    `Fleet: ${shape.customers} stacks × ${shape.usersPerCustomer} users, one key each, 600 requests/min per key (${label})`,
    "| phase | wall s | goal | requests | 429s | failed stacks | load after |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.phase} | ${r.seconds.toFixed(1)} | ${goal(r.phase)} | ${r.requests} | ${r.rateLimited} | ${r.failed} | ${r.load} |`,
    ),
  ].join("\n");
}
