import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "./harness";

/**
 * `--only plugin:start`: how long the native plugin takes from its start to printing its port (when
 * the engine can talk to it), each way it ships: the package's entry under node (`pulumi-resource-proxy`
 * from node_modules, the 0.31 s of issue 22), the bundled script `provider install` copies, and the
 * release's single executable. Runs alternate between the three, so a load that changes meanwhile
 * weighs on each alike. Goal (issue 34): the single executable within 1.2 × the package's entry.
 */

const RUNS = 9;

interface Variant {
  label: string;
  command: string;
  args: string[];
}

/** Milliseconds from spawn to the first line on stdout, in a folder with no node_modules. */
function startToPort(variant: Variant, cwd: string): Promise<number> {
  const started = performance.now();
  const child = spawn(variant.command, variant.args, { cwd, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.stdout.once("data", () => {
      resolve(performance.now() - started);
      child.kill();
    });
    child.once("exit", (code) => reject(new Error(`${variant.label} exited (${code}) before printing its port`)));
  });
}

/** The release's single executable, built as `npm run release` builds it, into `dir`. */
async function singleExecutable(dir: string): Promise<string> {
  const load = (name: string) => import(pathToFileURL(path.join(REPO_ROOT, "tools", "release", name)).href);
  const { bundlePlugin } = await load("bundle.mjs");
  const { compileExecutable, hostPlatform } = await load("compile.mjs");
  const script = path.join(dir, "pulumi-resource-proxy.cjs");
  await bundlePlugin({ outfile: script, entry: "executable" });
  return compileExecutable({ script, executable: path.join(dir, "pulumi-resource-proxy"), platform: hostPlatform() });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

export async function benchPluginStart(): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-plugin-start-"));
  try {
    const variants: Variant[] = [
      {
        label: "package entry (node)",
        command: process.execPath,
        args: [path.join(REPO_ROOT, "dist", "provider", "native", "main.js")],
      },
      {
        label: "bundled script (node)",
        command: process.execPath,
        args: [path.join(REPO_ROOT, "dist", "plugin", "pulumi-resource-proxy.cjs")],
      },
      { label: "single executable", command: await singleExecutable(scratch), args: [] },
    ];
    const times = variants.map(() => [] as number[]);
    for (let run = 0; run < RUNS; run++) {
      for (const [i, variant] of variants.entries()) times[i]?.push(await startToPort(variant, scratch));
    }
    const base = median(times[0] ?? []);
    console.log(`plugin start to port, median of ${RUNS} (load average ${os.loadavg()[0]?.toFixed(1)}):`);
    for (const [i, variant] of variants.entries()) {
      const ms = median(times[i] ?? []);
      console.log(
        `  ${variant.label.padEnd(24)} ${(ms / 1000).toFixed(2)} s  (${(ms / base).toFixed(2)} × the package entry)`,
      );
    }
    console.log("  goal: the single executable within 1.20 × the package entry");
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
