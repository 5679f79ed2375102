import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { type CliWorkspace, cliWorkspace, processesMarked, pulumi, startPulumi } from "../support/pulumiCli";

/**
 * Guards, not figures: a failing lookup used to grow the program process to gigabytes for minutes
 * (issue #26, item 1: a string on the JS heap; issue #32, item 1: V8 handles outside it, which no heap
 * ceiling bounds). The program's resident size is watched while the preview runs, and the run is
 * killed the moment it passes RSS_BOUND_MB, so the old behaviour fails the test in seconds without
 * taking the machine's memory with it.
 */
const HEAP_MB = 512;
const RSS_BOUND_MB = 1024;
const BOUND_MS = 90_000;

let workspace: CliWorkspace;
let server: ReferenceServer;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
  workspace = cliWorkspace();
  env = {
    ...workspace.env,
    PROXY_API_URL: server.url,
    PROXY_API_KEY: server.rootKey,
    NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
    // The TypeScript program compiles without the type check, which has nothing to do with the growth.
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
  };
});
afterAll(async () => {
  workspace?.cleanup();
  await server?.close();
});

/** The program of issue #32, exactly: the failed lookup's only use is getUsage's argument. */
const ISSUE_32_PROGRAM = [
  'import { getUsage, lookupProxyUser } from "pulumi-proxy";',
  'const missing = lookupProxyUser({ name: "no-such-user-here" });',
  'export const usage = getUsage({ from: "2026-11-01", to: "2026-11-02", proxyUserId: missing.id });',
].join("\n");

const ISSUE_32_PROGRAM_JS = [
  'const { getUsage, lookupProxyUser } = require("pulumi-proxy");',
  'const missing = lookupProxyUser({ name: "no-such-user-here" });',
  'exports.usage = getUsage({ from: "2026-11-01", to: "2026-11-02", proxyUserId: missing.id });',
].join("\n");

function project(name: string, typescript: boolean, program: string): string {
  const main = typescript ? "index.ts" : "index.js";
  return workspace.project(name, {
    "Pulumi.yaml": `name: ${name}\nruntime:\n  name: nodejs\n  options:\n    typescript: ${typescript}\n`,
    "package.json": JSON.stringify({ name, main }),
    [main]: program,
  });
}

function residentMb(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0; // ended meanwhile
  }
}

/** `pulumi preview` in `dir`, killed once any process it started passes RSS_BOUND_MB or BOUND_MS. */
async function boundedPreview(
  dir: string,
): Promise<{ code: number | null; output: string; peakMb: number; ms: number }> {
  const started = Date.now();
  const child = startPulumi(["preview"], dir, env);
  let peakMb = 0;
  const watch = setInterval(() => {
    for (const { pid } of processesMarked(workspace.marker)) peakMb = Math.max(peakMb, residentMb(pid));
    if ((peakMb > RSS_BOUND_MB || Date.now() - started > BOUND_MS) && child.pid !== undefined) {
      process.kill(-child.pid, "SIGKILL");
    }
  }, 100);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearInterval(watch);
  return { code, output: child.output(), peakMb, ms: Date.now() - started };
}

async function expectFailsFastNaming(dir: string, message: string): Promise<void> {
  expect((await pulumi(["stack", "init", "dev"], dir, env)).code).toBe(0);
  const run = await boundedPreview(dir);
  expect(run.peakMb, `peak resident size ${Math.round(run.peakMb)} MB\n${run.output}`).toBeLessThan(RSS_BOUND_MB);
  expect(run.ms, run.output).toBeLessThan(BOUND_MS);
  expect(run.code, run.output).not.toBe(0);
  expect(run.output).toContain(message);
  expect(run.output).not.toContain("non-zero exit code");
  expect(run.output).not.toMatch(/heap out of memory/i);
}

describe("a lookup of a name nobody holds, under the real CLI", () => {
  it("fed on to getUsage and exported: fails the preview fast with the one-line message", async () => {
    const dir = project(
      "lookup-missing",
      false,
      [
        'const pulumi = require("@pulumi/pulumi");',
        'const { getUsage, lookupProxyUser } = require("pulumi-proxy");',
        'const user = lookupProxyUser({ name: "nope" });',
        "exports.id = user.id;",
        "exports.both = pulumi.all([user.id]);",
        'exports.usage = getUsage({ from: "2026-01-01", to: "2026-01-31", proxyUserId: user.id });',
      ].join("\n"),
    );
    await expectFailsFastNaming(dir, 'lookupProxyUser: cannot look up a proxy user: no proxy user is named "nope"');
  }, 150_000);

  // Issue #32: with getUsage as the only use, V8's catch prediction (a debugger is enabled in every
  // program) walked every path of the Output graph downstream of the failure (provider/program/functions.ts).
  it.each([
    ["TypeScript", true, ISSUE_32_PROGRAM],
    ["JavaScript", false, ISSUE_32_PROGRAM_JS],
  ])(
    "fed only to getUsage, in %s: fails the preview fast, naming the user, in bounded memory",
    async (language, typescript, program) => {
      const dir = project(`lookup-only-usage-${language.toLowerCase()}`, typescript, program);
      await expectFailsFastNaming(dir, 'no proxy user is named "no-such-user-here"');
    },
    150_000,
  );
});
