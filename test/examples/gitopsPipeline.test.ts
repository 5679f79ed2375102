import fs from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { suiteSpeedSettings } from "../support/machineCaches";
import { npmCacheFor } from "../support/npmCache";
import { outsideFolder } from "../support/outside";
import { REPO_ROOT } from "../support/pulumi";
import { shellBlocks, substitute } from "../support/readmeBlocks";
import { runShell } from "../support/shell";
import { packedTarball } from "../support/tarball";
import { readWorkflow, runWorkflowStep, stepNamed } from "../support/workflowSteps";

const EXAMPLE = path.join(REPO_ROOT, "examples", "gitops");
const PROGRAM_DIR = "examples/gitops";
const PASSPHRASE = "a passphrase typed at the prompt";
/**
 * For every run of the program but plan.yml's Plan step, which shows that the program type-checks
 * against the installed tarball's types as CI installs it: ts-node's check costs 3.5 s of CPU a run.
 */
const TRANSPILE_ONLY = { PULUMI_NODEJS_TRANSPILE_ONLY: "true" };

/** A loopback port nothing listens on: a registry there refuses every request. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const README = path.join(EXAMPLE, "README.md");
/** The guide whose refresh and drift blocks run on this example's stack. */
const GUIDE = path.join(REPO_ROOT, "docs/guides/gitops-and-review.md");

/** The README's "Run it" blocks, as one shell session: what a user types, in order. */
function runItSession(): string {
  const readme = README;
  const lines = fs.readFileSync(readme, "utf8").split("\n");
  const start = lines.indexOf("## Run it");
  const end = lines.findIndex((line, index) => index > start && line.startsWith("## "));
  return shellBlocks(readme)
    .filter((block) => block.line > start && block.line < end)
    .map((block) => block.script)
    .join("\n");
}

async function shell(script: string, cwd: string, env: NodeJS.ProcessEnv, input = ""): Promise<string> {
  const { code, output } = await runShell(["-euo", "pipefail"], script, cwd, env, input);
  if (code !== 0) throw new Error(`exit ${code} running\n${script}\n--- output ---\n${output}`);
  return output;
}

/**
 * A new user's repository outside this one: the example copied in, set up word for word as its
 * README says (the tarball into vendor/, a backend, the stack), then a pull request's checkout on a
 * fresh runner, where the workflows' own install and plan steps run. npm is offline throughout, with
 * a registry on a dead loopback port and a cache holding only the lockfile's registry tarballs, so
 * any request for a package the lockfile does not pin (pulumi-proxy above all) fails.
 */
describe("the gitops example in a repository of its own, set up from its README and run by its workflows", () => {
  const outside = outsideFolder();
  const repo = path.join(outside.dir, "repo");
  const program = path.join(repo, PROGRAM_DIR);
  const state = path.join(outside.dir, "state");
  const checkout = path.join(outside.dir, "runner", "work");
  const context = {
    matrix: { stack: "prod" },
    secrets: { PULUMI_BACKEND_URL: `file://${state}`, PULUMI_CONFIG_PASSPHRASE: PASSPHRASE },
  };
  let server: ReferenceServer;
  let registry: string;

  /** plan.yml's job, as the pull request's checkout has it. */
  const planJob = () => {
    const job = readWorkflow(path.join(checkout, PROGRAM_DIR, ".github", "workflows", "plan.yml")).jobs.plan;
    if (!job) throw new Error("plan.yml has no job named plan");
    return job;
  };

  /** A machine with no npm or Pulumi settings of its own, and Pulumi 3.248.0 on PATH. */
  const machine = (name: string, npmCache: string): NodeJS.ProcessEnv => {
    const home = path.join(outside.dir, name);
    fs.mkdirSync(home, { recursive: true });
    return {
      ...suiteSpeedSettings(),
      PATH: [inject("pulumiBinDir"), process.env.PATH].join(path.delimiter),
      HOME: home,
      npm_config_cache: npmCache,
      npm_config_offline: "true",
      npm_config_registry: registry,
      npm_config_update_notifier: "false",
      PULUMI_SKIP_UPDATE_CHECK: "true",
    };
  };

  beforeAll(async () => {
    registry = `http://127.0.0.1:${await deadPort()}/`;
    const tarball = await packedTarball();
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    fs.cpSync(EXAMPLE, program, { recursive: true, filter: (file) => path.basename(file) !== "node_modules" });
    const cache = path.join(outside.dir, "npm-cache-laptop");
    npmCacheFor(path.join(program, "package-lock.json"), cache);
    const session = substitute(runItSession(), { url: server.url, key: server.rootKey })
      .replaceAll("/path/to/pulumi-proxy-0.1.0.tgz", tarball)
      .replaceAll("s3://my-team-state/pulumi", `file://${state}`);
    fs.mkdirSync(state);
    // What a user confirms with "yes" at `pulumi up`'s prompt.
    await shell(
      session,
      program,
      { ...machine("laptop", cache), PULUMI_SKIP_CONFIRMATIONS: "true", ...TRANSPILE_ONLY },
      `${PASSPHRASE}\n`,
    );
  });
  afterAll(async () => {
    await server?.close();
    outside.cleanup();
  });

  it("the README's install records pulumi-proxy as the vendored tarball, with its checksum", () => {
    const lock = JSON.parse(fs.readFileSync(path.join(program, "package-lock.json"), "utf8"));
    expect(lock.packages["node_modules/pulumi-proxy"]).toMatchObject({
      resolved: "file:vendor/pulumi-proxy-0.1.0.tgz",
      integrity: expect.stringMatching(/^sha512-/),
    });
    expect(server.control.snapshot().proxyUsers).toHaveLength(2);
  });

  it("the README's review, credentials, drift and re-enable blocks run on the laptop as a user types them", async () => {
    // Before the pull request's change: the plan and drift commands exit 0 only with nothing to do.
    const block = (heading: string, file = README) => {
      const lines = fs.readFileSync(file, "utf8").split("\n");
      const start = lines.indexOf(heading);
      const end = lines.findIndex((line, index) => index > start && line.startsWith("## "));
      const blocks = shellBlocks(file).filter(
        (b) => b.marker !== "none" && b.line > start && b.line < (end < 0 ? Infinity : end),
      );
      return blocks.map((b) => substitute(b.script, { url: server.url, key: server.rootKey }));
    };
    const laptop: NodeJS.ProcessEnv = {
      ...machine("laptop", path.join(outside.dir, "npm-cache-laptop")),
      PULUMI_BACKEND_URL: `file://${state}`,
      PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
      // What a user confirms with "yes" at `pulumi up`'s prompt.
      PULUMI_SKIP_CONFIRMATIONS: "true",
      ...TRANSPILE_ONLY,
    };
    const [review] = block("## Review: `pulumi-proxy plan`");
    const plans = await shell(review as string, program, laptop);
    expect(plans).toContain("## pulumi-proxy plan: prod");
    expect(plans).toMatch(/### Policy\n\n⚠️ \d+ advisory \(`proxy-policy`\)/);
    expect(plans).toContain('"version": 1');

    const [credentials] = block("## Handing out credentials");
    const handedOut = await shell(credentials as string, program, laptop);
    expect(handedOut).toMatch(/"username": "[^"]+",\s*"password": "[^"]+"/);

    const [drift, reenable] = block("## Drift");
    expect(await shell(drift as string, program, laptop)).toContain("No drift in stack prod");
    // The guide's words, with the installed package's command on PATH as the root README's Install leaves it.
    const [refresh, guideDrift] = block("# Drift detection, review and GitOps", GUIDE);
    const installed = {
      ...laptop,
      PATH: [path.join(program, "node_modules", ".bin"), laptop.PATH].join(path.delimiter),
    };
    await shell(refresh as string, program, installed);
    expect(await shell(guideDrift as string, program, installed)).toContain("No drift in stack prod");
    expect(JSON.parse(fs.readFileSync(path.join(program, "drift.json"), "utf8"))).toMatchObject({
      version: 1,
      stack: "prod",
      drift: false,
    });
    const released = await shell(reenable as string, program, laptop);
    expect(released).toMatch(/~ 1 updated/);
    expect(released).toMatch(/3 unchanged/);
    expect(handedOut + plans + released).not.toContain(server.rootKey);
  });

  it("plan.yml installs from a clean cache offline and plans the pull request's change", async () => {
    // The pull request: one ceiling raised, committed with the lockfile and vendor/ (node_modules is not).
    await shell("pulumi config set --stack prod --path 'users.crawler.monthlyGb' 800", program, {
      ...machine("laptop", path.join(outside.dir, "npm-cache-laptop")),
      PULUMI_BACKEND_URL: `file://${state}`,
      PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
    });
    fs.cpSync(repo, checkout, { recursive: true, filter: (file) => path.basename(file) !== "node_modules" });
    const cache = path.join(outside.dir, "npm-cache-runner");
    npmCacheFor(path.join(checkout, PROGRAM_DIR, "package-lock.json"), cache);
    const runner = machine("runner", cache);
    const job = planJob();

    const install = await runWorkflowStep(job, stepNamed(job, /^Install/), checkout, context, runner);
    expect(install.code, install.output).toBe(0);
    expect(install.stepEnv).not.toHaveProperty("PULUMI_CONFIG_PASSPHRASE");
    const installed = path.join(checkout, PROGRAM_DIR, "node_modules", "pulumi-proxy", "package.json");
    expect(JSON.parse(fs.readFileSync(installed, "utf8")).version).toBe("0.1.0");

    const plan = await runWorkflowStep(job, stepNamed(job, /^Plan$/), checkout, context, runner);
    expect(plan.code, plan.output).toBe(0);
    expect(plan.outputs).toBe("exit-code=2\n");
    expect(plan.summary).toContain("## pulumi-proxy plan: prod");
    expect(plan.summary).toContain("`team-crawler` monthly ceiling **raised**: 400 GB → 800 GB");
    // The example's policy pack ran in the preview: no mandatory rule broken, advice shown first.
    expect(plan.summary).toMatch(/### Policy\n\n⚠️ \d+ advisory \(`proxy-policy`\): advisory only, nothing blocks\./);
    expect(plan.summary.indexOf("### Policy")).toBeLessThan(plan.summary.indexOf("### Cost"));
    expect(plan.summary).not.toContain(server.rootKey);
  });

  it("the README's read-only plan: a key that only reads, no proxy:apiKey in the config, no --refresh", async () => {
    const runner = { ...machine("runner", path.join(outside.dir, "npm-cache-runner")), ...TRANSPILE_ONLY };
    const readOnly = await new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey }).keys.create({
      name: "plan",
      scopes: ["proxy-users:read"],
    });
    await shell("pulumi config rm --stack prod proxy:apiKey", path.join(checkout, PROGRAM_DIR), {
      ...runner,
      PULUMI_BACKEND_URL: `file://${state}`,
      PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
    });
    const job = planJob();
    const step = stepNamed(job, /^Plan$/);
    const readOnlyStep = {
      ...step,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as the README writes it
      env: { ...step.env, PROXY_API_KEY: "${{ secrets.PROXY_PLAN_API_KEY }}" },
      run: step.run?.replace(" --refresh", ""),
    };
    expect(readOnlyStep.run).not.toBe(step.run);
    const secrets = { ...context.secrets, PROXY_PLAN_API_KEY: readOnly.secret };
    const plan = await runWorkflowStep(job, readOnlyStep, checkout, { ...context, secrets }, runner);
    expect(plan.code, plan.output).toBe(0);
    expect(plan.outputs).toBe("exit-code=2\n");
    expect(plan.summary).toContain("`team-crawler` monthly ceiling **raised**: 400 GB → 800 GB");
  });
});
