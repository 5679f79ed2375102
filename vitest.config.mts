import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Longest files first, so that none starts last and runs alone while the other workers idle. A
 * file's length is its duration in Vitest's cache of the last run; without one (a fresh clone, CI,
 * a new file) it is the first entry below that its path starts with: the files that take longest
 * on their own, then each folder's typical length. Vitest's own order ranks a file without a cached
 * duration by size, which put the README files, a few lines each and minutes long, at the very end;
 * and the files that mostly wait (a rate limit's window, a restart, a browser) are listed so that
 * they start while the others still have work, instead of after them all (a fresh clone's last 20 s
 * ran on one core).
 */
const TYPICAL_SECONDS: [pathPrefix: string, seconds: number][] = [
  ["test/release/release.test.ts", 130],
  ["test/examples/gitopsPipeline.test.ts", 110],
  ["test/examples/fleet.test.ts", 70],
  ["test/native/functions.test.ts", 45],
  ["test/provider/skipCheckpoints.test.ts", 30],
  ["test/foundation/pythonInterpreter.test.ts", 27],
  ["test/sdk/ratelimit.test.ts", 12],
  ["test/foundation/deferModules.test.ts", 12],
  ["test/foundation/killedEngine.test.ts", 12],
  ["test/foundation/demo.test.ts", 10],
  ["test/policy/", 10],
  ["test/sdk/firstContact.test.ts", 10],
  ["test/browser/", 9],
  ["test/gateway/", 5],
  ["test/release/", 90],
  ["test/docs/", 60],
  ["test/examples/", 40],
  ["test/cli/", 40],
  ["test/native/", 25],
  ["test/provider/", 15],
  ["test/foundation/", 6],
];

/** Shorter than this, a file runs among its project's others at the end of the run, longest first. */
const SHORT_FILE_MS = 10_000;

class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const expectedMs = (file: TestSpecification) => {
      const relative = path.relative(this.ctx.config.root, file.moduleId).split(path.sep).join("/");
      const cached = this.ctx.cache.getFileTestResults(`${file.project.name}:${relative}`)?.duration;
      if (cached !== undefined) return cached;
      return (TYPICAL_SECONDS.find(([prefix]) => relative.startsWith(prefix))?.[1] ?? 1) * 1000;
    };
    const longestFirst = (await super.sort(files)).sort((a, b) => expectedMs(b) - expectedMs(a));
    // A worker runs one project's files only: a file of another project gets a new process (a fork,
    // Vitest's runtime, the sources again: about a second of CPU). Ordered by length alone, the last
    // minute alternated between the three projects' short files and started 25 processes for them.
    const long = longestFirst.filter((file) => expectedMs(file) >= SHORT_FILE_MS);
    const short = longestFirst.filter((file) => expectedMs(file) < SHORT_FILE_MS);
    const projects = [...new Set(short.map((file) => file.project.name))];
    return [...long, ...projects.flatMap((name) => short.filter((file) => file.project.name === name))];
  }
}

const REPO_ROOT = path.dirname(fileURLToPath(import.meta.url));

function testFilesIn(...folders: string[]): string[] {
  return folders.flatMap((folder) =>
    fs
      .readdirSync(path.join(REPO_ROOT, folder))
      .filter((name) => name.endsWith(".test.ts"))
      .map((name) => `${folder}/${name}`),
  );
}

/**
 * For every process the tests start, speed alone (the suite is bound by CPU; test/globalSetup.ts
 * keeps the cache's size in check):
 * - a V8 code cache for each Node process's modules (test/support/codeCache.cjs says how);
 * - GOGC=400 for the Go CLI and plugins: each CLI call is short and collects garbage while it
 *   initialises (a `stack output` takes 0.38 s of CPU by default, 0.32 s with this).
 * - no NODE_EXTRA_CA_CERTS: where a machine sets it (a sandbox's egress CA, here the whole system
 *   bundle), every Node process parses that file and builds its root store as it starts, before any
 *   script runs: 0.1 s of CPU, most of `node -e 0` (0.13 s against 0.03 s). The suite's processes
 *   talk to loopback only; the few that reach a registry get the machine's value back
 *   (`registryAccess()`, test/support/machineCaches.ts), as Vitest's own processes keep it.
 */
// suiteSpeedSettings() in test/support/machineCaches.ts names these variables too, for a test that
// builds a machine's environment from nothing: a new one goes in both.
function speedEnvironment(): Record<string, string> {
  const preload = `--require ${JSON.stringify(path.join(REPO_ROOT, "test", "support", "codeCache.cjs"))}`;
  return {
    NODE_OPTIONS: [process.env.NODE_OPTIONS, preload].filter(Boolean).join(" "),
    PULUMI_PROXY_CODE_CACHE_DIR: path.join(REPO_ROOT, ".pulumi-proxy", "code-cache"),
    GOGC: process.env.GOGC ?? "400",
    // Node reads an empty value as none.
    NODE_EXTRA_CA_CERTS: "",
    PULUMI_PROXY_MACHINE_EXTRA_CA_CERTS:
      process.env.PULUMI_PROXY_MACHINE_EXTRA_CA_CERTS ?? process.env.NODE_EXTRA_CA_CERTS ?? "",
  };
}

/** Of the fast folders, the files that start the built server (dist/server/cli.js): the build is the engine tier's. */
const NEEDS_THE_BUILD = ["test/sdk/firstContact.test.ts", "test/reference-server/persistence-cli.test.ts"];

/**
 * The tiers, each a Vitest project that runs alone (`npm run test:fast`, `test:soak`, `test:engine`);
 * `npm test` runs all three.
 * - fast: no engine, no build, no child process: the contract, the SDK, the descriptors' rules, the
 *   schema, rendering and the reference server in process. A minute, for while you work.
 * - soak: the long runs: engine kills and recovery, the fleet, the release, the README and docs runs.
 * - engine: the rest, through the real `pulumi` CLI and the built package.
 */
const FAST = [
  ...testFilesIn("test/sdk", "test/reference-server"),
  "test/native/protocol.test.ts",
  "test/native/schema.test.ts",
  "test/provider/idempotency.test.ts",
  "test/provider/rateLimitReserve.test.ts",
  "test/provider/readCoalescer.test.ts",
  "test/provider/readFreshness.test.ts",
  "test/provider/retryWindow.test.ts",
  "test/cli/reportRender.test.ts",
  "test/foundation/crashAudit.test.ts",
  "test/foundation/layout.test.ts",
  "test/foundation/visibleText.test.ts",
  "test/docs/referenceDocs.test.ts",
].filter((file) => !NEEDS_THE_BUILD.includes(file));
const SOAK = [
  "test/provider/crash.test.ts",
  "test/foundation/killedEngine.test.ts",
  "test/cli/recover.test.ts",
  "test/examples/fleet.test.ts",
  // The release's Python path, on the soak tier's shared release build.
  "test/examples/pythonQuickstart.test.ts",
  "test/release/*.test.ts",
  "test/docs/readmeCommands.test.ts",
  "test/docs/docsCommands.test.ts",
  "test/docs/exampleReadmes.test.ts",
  "test/docs/exampleReadmesSecondHalf.test.ts",
  "test/docs/installSources.test.ts",
];

const shared = {
  setupFiles: ["test/deferModules.setup.ts"],
  env: speedEnvironment(),
  // Engine tests drive the real CLI through several up/preview/destroy rounds; a loaded 2-core machine needs room.
  testTimeout: 300_000,
  hookTimeout: 300_000,
  // Each worker runs file after file in one process instead of a fresh process per file: a file's
  // start (a fork, Vitest's runtime, the sources again) cost about a second of CPU, over a hundred
  // files (warm suite 717 -> 651 s). The files share no state but what each one opens and closes
  // itself: its own servers, stacks and temp folders; module state in the sources is keyed by the
  // API settings, which differ per test server. Inline programs' gRPC clients to their engines would
  // be shared state (grpc-js pools connections per process): harness/inlineRuns.ts closes and isolates them.
  isolate: false,
};
/** The build, the Pulumi CLI and the browser, which every engine test needs; the fast tier none of them. */
const withEngine = { ...shared, globalSetup: ["test/globalSetup.ts"] };

export default defineConfig({
  test: {
    sequence: { sequencer: LongFilesFirst },
    // Engine tests spawn the CLI, a language host and provider processes, and wait on them, on servers
    // and on timeouts: with two workers on two cores a fifth of the CPU sat idle. A third worker fills
    // most of it (warm vitest 637 -> 602 s, the same CPU; when each file started a fresh process it
    // did not: 777 against 781 s), a fourth the rest (warm 607 -> 561 s, no more CPU).
    maxWorkers: 4,
    projects: [
      { test: { ...shared, name: "fast", include: FAST } },
      // The soak tier's release files share one build, served at one address for the whole run.
      {
        test: {
          ...withEngine,
          globalSetup: [...withEngine.globalSetup, "test/release/serveReleases.ts"],
          name: "soak",
          include: SOAK,
        },
      },
      {
        test: {
          ...withEngine,
          name: "engine",
          include: ["test/**/*.test.ts"],
          exclude: [...FAST, ...SOAK],
        },
      },
    ],
  },
});
