import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { runShell } from "./shell";

// js-yaml comes with the pinned @pulumi/pulumi, so reading a workflow needs no dependency of its own.
const { load } = createRequire(__filename)("js-yaml") as { load(text: string): unknown };

export interface WorkflowStep {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  with?: Record<string, string>;
  run?: string;
  env?: Record<string, string>;
  "working-directory"?: string;
}

export interface WorkflowJob {
  if?: string;
  env?: Record<string, string>;
  steps: WorkflowStep[];
}

export interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, WorkflowJob>;
}

export function readWorkflow(file: string): Workflow {
  return load(fs.readFileSync(file, "utf8")) as Workflow;
}

/** The values a step's `${{ }}` expressions may name: secrets, the matrix, and the job's env. */
export interface StepContext {
  secrets: Record<string, string>;
  matrix: Record<string, string>;
}

/**
 * Fills in `${{ secrets.X }}`, `${{ matrix.X }}` and `${{ env.X }}`; any other expression is refused,
 * so a workflow cannot grow one this runner would get wrong.
 */
function evaluate(text: string, context: StepContext, env: Record<string, string>): string {
  return text.replaceAll(/\$\{\{\s*([^}]*?)\s*\}\}/g, (expression, inner: string) => {
    const [scope, name] = inner.split(".", 2) as [string, string | undefined];
    const values: Record<string, Record<string, string>> = { secrets: context.secrets, matrix: context.matrix, env };
    const value = name === undefined ? undefined : values[scope]?.[name];
    if (value === undefined) throw new Error(`the test runner does not evaluate ${expression}`);
    return value;
  });
}

function evaluated(
  vars: Record<string, string> | undefined,
  context: StepContext,
  env: Record<string, string>,
): Record<string, string> {
  return Object.fromEntries(Object.entries(vars ?? {}).map(([name, value]) => [name, evaluate(value, context, env)]));
}

export interface StepRun {
  code: number | null;
  output: string;
  /** What the step appended to $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT. */
  summary: string;
  outputs: string;
  /** The environment the step's script ran with, beyond `base`. */
  stepEnv: Record<string, string>;
}

/**
 * Runs one `run:` step of a job as a GitHub runner does: `bash -e`, in the step's working-directory
 * under the checkout, with the job's env and then the step's own, expressions filled in from
 * `context`. `base` stands for the runner's own environment (PATH, HOME, npm's settings).
 */
export async function runWorkflowStep(
  job: WorkflowJob,
  step: WorkflowStep,
  checkout: string,
  context: StepContext,
  base: NodeJS.ProcessEnv,
): Promise<StepRun> {
  if (step.run === undefined) throw new Error(`step "${step.name}" has no run: script`);
  const jobEnv = evaluated(job.env, context, {});
  const stepEnv = { ...jobEnv, ...evaluated(step.env, context, jobEnv) };
  const cwd = path.join(checkout, evaluate(step["working-directory"] ?? ".", context, stepEnv));
  const files = fs.mkdtempSync(path.join(checkout, "..", "runner-"));
  const summaryFile = path.join(files, "summary.md");
  const outputFile = path.join(files, "output");
  for (const file of [summaryFile, outputFile]) fs.writeFileSync(file, "");
  const env = {
    ...base,
    ...stepEnv,
    GITHUB_STEP_SUMMARY: summaryFile,
    GITHUB_OUTPUT: outputFile,
    GITHUB_RUN_ID: "1",
    CI: "true",
  };
  try {
    const { code, output } = await runShell(["-e"], step.run, cwd, env);
    const read = (file: string) => fs.readFileSync(file, "utf8");
    return { code, output, summary: read(summaryFile), outputs: read(outputFile), stepEnv };
  } finally {
    fs.rmSync(files, { recursive: true, force: true });
  }
}

/** The job's step whose name matches. */
export function stepNamed(job: WorkflowJob, name: RegExp): WorkflowStep {
  const step = job.steps.find((candidate) => name.test(candidate.name ?? ""));
  if (!step) throw new Error(`no step named ${name}: ${job.steps.map((s) => s.name ?? s.uses).join(", ")}`);
  return step;
}
