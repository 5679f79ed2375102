import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { sharedRelease } from "../release/releaseFolder";
import { machineCaches } from "./machineCaches";
import { ownTmpDir, pathWithoutNode } from "./nodeFree";
import { REPO_ROOT } from "./pulumi";
import { atRelease, type ShellBlock, shellBlocks, substitute } from "./readmeBlocks";
import { runShell } from "./shell";

/**
 * Runs a README's marked shell blocks as the root README's "Contributing" section says. The READMEs
 * are split over two test files (the root's, the examples') so the two workers share them.
 */

/** The READMEs of the repository: the root's, the guides for contributors and releasers, and the packages'. */
export const PACKAGE_READMES = ["README.md", "CONTRIBUTING.md", "RELEASING.md", "sdk/README.md", "server/README.md"];

/** Every page of docs/ (guides, commands, the generated reference), each run on its own like a README. */
export const DOC_PAGES = (fs.readdirSync(path.join(REPO_ROOT, "docs"), { recursive: true }) as string[])
  .filter((file) => file.endsWith(".md"))
  .map((file) => path.join("docs", file).split(path.sep).join("/"))
  .sort();
export const EXAMPLE_READMES = fs
  .readdirSync(path.join(REPO_ROOT, "examples"))
  .filter((name) => fs.existsSync(path.join(REPO_ROOT, "examples", name, "README.md")))
  .map((name) => `examples/${name}/README.md`);

/** The blocks marked to run, per README; a README with none (sdk/README.md shows TypeScript only) is left out. */
export function runnableReadmes(readmes: string[]): { readme: string; blocks: ShellBlock[] }[] {
  return readmes
    .map((readme) => ({
      readme,
      blocks: shellBlocks(path.join(REPO_ROOT, readme)).filter((block) => block.marker === "run"),
    }))
    .filter(({ blocks }) => blocks.length > 0);
}

/**
 * What makes a README's run long: each engine run, install or build its blocks start (a few seconds
 * of CPU to a minute each); the rest of its commands take next to nothing.
 */
const COSTLY_COMMAND =
  /\bpulumi (up|preview|destroy|refresh|import|convert|install)\b|(npx )?pulumi-proxy (fleet|drift|plan|recover|coverage)\b|-m venv\b|pip install\b|\bnpm (install|ci|run)\b|\bgo (build|mod tidy)\b/g;

function expectedCost(blocks: ShellBlock[]): number {
  return blocks.reduce((sum, block) => sum + (block.script.match(COSTLY_COMMAND)?.length ?? 0), 0);
}

/**
 * One of two halves (0 or 1) of the examples' READMEs, of about the same cost: together they take
 * minutes, so two files, one per worker, keep either from running alone at the end of the suite.
 * The costliest README goes first, each into the half that costs less so far.
 */
export function exampleReadmesHalf(half: 0 | 1): { readme: string; blocks: ShellBlock[] }[] {
  const readmes = runnableReadmes(EXAMPLE_READMES).map((entry) => ({ ...entry, cost: expectedCost(entry.blocks) }));
  const halves: [typeof readmes, typeof readmes] = [[], []];
  const costOf = (list: typeof readmes) => list.reduce((sum, entry) => sum + entry.cost, 0);
  for (const entry of [...readmes].sort((a, b) => b.cost - a.cost || a.readme.localeCompare(b.readme))) {
    halves[costOf(halves[0]) <= costOf(halves[1]) ? 0 : 1].push(entry);
  }
  return halves[half].map(({ readme, blocks }) => ({ readme, blocks }));
}

export function where(block: ShellBlock): string {
  return `${path.relative(REPO_ROOT, block.file)}:${block.line}`;
}

/**
 * The folder a README's commands run in, outside the repository: a copy of its example (the root and
 * other READMEs get the quickstart, which the root Pulumi.yaml runs too), with node_modules resolving
 * to the repository's, as after `npm install` of the package, unless every block is a release's.
 */
function workspaceFor(readme: string, tempDir: string, nodeModules: boolean): string {
  return copyOfExample(/^examples\/([^/]+)\//.exec(readme)?.[1] ?? "quickstart", tempDir, nodeModules);
}

/**
 * `examples/<example>` copied into `<tempDir>/<example>` as a user's folder: no stack settings file,
 * and node_modules resolving to the repository's (as after `npm install` of the package) when asked.
 */
export function copyOfExample(example: string, tempDir: string, nodeModules: boolean): string {
  const dir = path.join(tempDir, example);
  fs.cpSync(path.join(REPO_ROOT, "examples", example), dir, {
    recursive: true,
    filter: (file) => path.basename(file) !== "node_modules" && !/^Pulumi\..+\.yaml$/.test(path.basename(file)),
  });
  if (nodeModules) fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

/** The passphrase of every stack a README's commands make. */
export const README_PASSPHRASE = "readme-passphrase";

/**
 * The shell a README's reader types in: their own HOME and Pulumi home, a file backend, the suite's
 * pulumi first on PATH, and no API credentials (the caller adds them, or the README's `config set`
 * lines must supply them), and a temporary folder of their own (`ownTmpDir`).
 */
export function readmeShell(dirs: { home: string; pulumiHome: string; backend: string }): NodeJS.ProcessEnv {
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true });
  const { PROXY_API_URL: _url, PROXY_API_KEY: _key, ...inherited } = process.env;
  return {
    ...inherited,
    ...machineCaches(),
    HOME: dirs.home,
    TMPDIR: ownTmpDir(dirs.home),
    PULUMI_HOME: dirs.pulumiHome,
    PULUMI_BACKEND_URL: `file://${dirs.backend}`,
    PULUMI_CONFIG_PASSPHRASE: README_PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    // What a user confirms with "yes" at the prompt.
    PULUMI_SKIP_CONFIRMATIONS: "true",
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    PATH: [inject("pulumiBinDir"), path.join(REPO_ROOT, "node_modules", ".bin"), process.env.PATH].join(path.delimiter),
  };
}

function environment(tempDir: string, server: ReferenceServer): NodeJS.ProcessEnv {
  const dirs = { home: "home", pulumiHome: "pulumi-home", backend: "backend" };
  const shell = readmeShell(
    Object.fromEntries(Object.entries(dirs).map(([key, dir]) => [key, path.join(tempDir, dir)])) as typeof dirs,
  );
  return { ...shell, PROXY_API_URL: server.url, PROXY_API_KEY: server.rootKey };
}

async function runBlock(block: ShellBlock, script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const { code, output } = await runShell(["-euo", "pipefail"], script, cwd, env);
  if (code !== 0) {
    throw new Error(`${where(block)}: exit ${code} running\n${script}\n--- output ---\n${output.slice(-4_000)}`);
  }
}

/** Starts a long-running block and resolves once it has printed something and is still running. */
function startBackground(
  block: ShellBlock,
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-euo", "pipefail", "-c", script], { cwd, env, detached: true });
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (/listening on/.test(output)) resolve(child);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code) => reject(new Error(`${where(block)}: exited ${code} before it was ready\n${output}`)));
  });
}

/**
 * A release block's environment: a PATH with no node, npm or npx, nor the repository's
 * node_modules/.bin, for the README's blocks marked `release`; the URL of the suite's shared release build.
 */
async function withoutNode(env: NodeJS.ProcessEnv, tempDir: string) {
  const release = await sharedRelease();
  const { NODE_OPTIONS: _preload, ...rest } = env;
  return { baseUrl: release.baseUrl, env: { ...rest, PATH: pathWithoutNode(tempDir, rest.HOME ?? tempDir) } };
}

/** Runs the blocks in order in a temp folder against a fresh reference server; the first failure throws. */
export async function runReadme(readme: string, blocks: ShellBlock[]): Promise<void> {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-readme-"));
  const server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
  const background: ChildProcess[] = [];
  try {
    const cwd = workspaceFor(
      readme,
      tempDir,
      blocks.some((block) => !block.release),
    );
    const env = environment(tempDir, server);
    const nodeFree = blocks.some((block) => block.release) ? await withoutNode(env, tempDir) : undefined;
    for (const block of blocks) {
      const substituted = substitute(block.script, { url: server.url, key: server.rootKey });
      const run =
        block.release && nodeFree
          ? { script: atRelease(substituted, nodeFree.baseUrl), env: nodeFree.env }
          : { script: substituted, env };
      const dir = block.inRepo ? REPO_ROOT : cwd;
      if (block.background) background.push(await startBackground(block, run.script, dir, run.env));
      else await runBlock(block, run.script, dir, run.env);
    }
  } finally {
    for (const child of background) if (child.pid) process.kill(-child.pid, "SIGTERM");
    await server.close();
    fs.rmSync(tempDir, { recursive: true, force: true });
  }
}
