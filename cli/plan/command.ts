import fs from "node:fs";
import path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { type CliCommand, usageLines } from "../command";
import { keyDeadlines, type StoredResource } from "../deadlines";
import { runFleetPlan } from "../fleet/plan";
import { fleetOption, withFleetStack } from "../fleet/reports";
import { loadFleet } from "../fleet/spec";
import {
  ENVIRONMENT_USAGE,
  exportedState,
  openTargetStack,
  parseStackFlags,
  reportFailure,
  STACK_USAGE,
  type StackTarget,
  stackTarget,
  UsageError,
} from "../stack";
import { liveAccount } from "./live";
import type { PlanJson } from "./model";
import { formatPlanMarkdown, formatPlanText } from "./render";
import { describeAccess, describeChanges, planCost, reviewSteps } from "./review";
import { previewSteps } from "./steps";

const SYNOPSIS = [
  `pulumi-proxy plan --stack <name> [--cwd <dir>] [--refresh] [--policy-pack <dir> [--policy-pack-config <file>]]
                          [--json | --markdown] [--pulumi-root <dir>]`,
  "pulumi-proxy plan --fleet <file or dir> [the same options]   every stack of a fleet, one report",
];

const USAGE = `${usageLines(SYNOPSIS)}

Runs \`pulumi preview\` on an existing stack and prints what it will do in a reviewer's words:
every change with the properties that change, what it will cost (exactly, by the API's rules and
the allocations' live state) and what it does to access (keys and scopes, logins, ceilings).
Secrets are never shown.

${STACK_USAGE}
  --refresh            refresh the state from the API first, as \`pulumi preview --refresh\`
  --policy-pack <dir>  run this policy pack in the preview and show its verdicts, violations first
                       (repeatable; \`pulumi-proxy policy init <dir>\` writes one)
  --policy-pack-config <file>
                       the pack's levels and numbers, as \`pulumi preview --policy-pack-config\`
  --json               print the plan as JSON (a stable shape, "version": 1) instead of text
  --markdown           print the plan as Markdown, for a pull-request comment or a job summary
  --help               this text

${ENVIRONMENT_USAGE}
Prices come from the API named by the stack's proxy:apiUrl and proxy:apiKey (or PROXY_API_URL and
PROXY_API_KEY); the key needs proxy-users:read.

Exit codes: 0 no changes, 2 changes, 3 a mandatory policy violation (the plan is printed all the
same), 1 error.`;

export const PLAN_EXIT = { noChanges: 0, error: 1, changes: 2, policyViolation: 3 } as const;

export interface PlanArgs extends StackTarget {
  refresh: boolean;
  format: "text" | "json" | "markdown";
  policyPacks: string[];
  policyPackConfigs: string[];
}

export function parsePlanArgs(argv: string[]): PlanArgs | "help" {
  const values = parseStackFlags(argv, {
    refresh: { type: "boolean" },
    "policy-pack": { type: "string", multiple: true },
    "policy-pack-config": { type: "string", multiple: true },
    json: { type: "boolean" },
    markdown: { type: "boolean" },
  });
  if (values.help) return "help";
  if (values.json && values.markdown) throw new UsageError("--json and --markdown exclude each other: pick one");
  const format = values.json ? "json" : values.markdown ? "markdown" : "text";
  const target = stackTarget(values);
  // Relative to where the command runs, as any path argument; the engine runs in the program's folder.
  const fromCwd = (paths: string[] | undefined) => (paths ?? []).map((file) => path.resolve(file));
  const policyPacks = fromCwd(values["policy-pack"]);
  const policyPackConfigs = fromCwd(values["policy-pack-config"]);
  if (policyPackConfigs.length > 0 && policyPacks.length === 0) {
    throw new UsageError("--policy-pack-config needs the --policy-pack it configures");
  }
  for (const dir of policyPacks) {
    if (!fs.existsSync(path.join(dir, "PulumiPolicy.yaml"))) {
      throw new UsageError(
        `--policy-pack ${dir} holds no PulumiPolicy.yaml; \`pulumi-proxy policy init ${dir}\` writes a pack there`,
      );
    }
  }
  return { ...target, refresh: values.refresh === true, format, policyPacks, policyPackConfigs };
}

/** Previews the stack and builds the whole plan: changes, cost and access. */
export async function makePlan(stack: Stack, args: PlanArgs): Promise<PlanJson> {
  const { steps, policy } = await previewSteps(stack, args);
  const plannedAt = new Date();
  const reviewed = reviewSteps(steps);
  const live = liveAccount(stack, plannedAt.getTime());
  const summary = { create: 0, update: 0, replace: 0, delete: 0 };
  for (const step of steps) summary[step.op] += 1;
  return {
    version: 1,
    stack: args.stack,
    cwd: args.cwd,
    plannedAt: plannedAt.toISOString(),
    refresh: args.refresh,
    hasChanges: steps.length > 0,
    summary,
    changes: describeChanges(reviewed),
    cost: await planCost(reviewed, live),
    access: await describeAccess(reviewed, live),
    ...(policy ? { policy } : {}),
    keysDueSoon: keyDeadlines(
      ((await exportedState(stack)).deployment?.resources ?? []) as StoredResource[],
      plannedAt.getTime(),
    ),
  };
}

export async function runPlan(args: PlanArgs): Promise<number> {
  const plan = await makePlan(await openTargetStack(args), args);
  const output =
    args.format === "json"
      ? JSON.stringify(plan, null, 2)
      : args.format === "markdown"
        ? formatPlanMarkdown(plan)
        : formatPlanText(plan);
  process.stdout.write(`${output}\n`);
  if (plan.policy?.failed) return PLAN_EXIT.policyViolation;
  return plan.hasChanges ? PLAN_EXIT.changes : PLAN_EXIT.noChanges;
}

/** `pulumi-proxy plan …`: its own usage and errors; exit 0 no changes, 2 changes, 3 policy violation, 1 error. */
export async function planCommand(argv: string[]): Promise<number> {
  let args: PlanArgs | "help" | undefined;
  try {
    const { fleet, rest } = fleetOption(argv);
    args = parsePlanArgs(fleet ? withFleetStack(rest, loadFleet(fleet)) : argv);
    if (fleet && args !== "help") {
      const template = args;
      const options = { format: args.format, ...(args.pulumiRoot ? { pulumiRoot: args.pulumiRoot } : {}) };
      return await runFleetPlan(fleet, options, (stack) => makePlan(stack, { ...template, stack: stack.name }));
    }
    if (args === "help") {
      process.stdout.write(`${USAGE}\n`);
      return PLAN_EXIT.noChanges;
    }
    return await runPlan(args);
  } catch (error) {
    reportFailure("plan", USAGE, error, args);
    return PLAN_EXIT.error;
  }
}

export const command: CliCommand = {
  name: "plan",
  summary: "what the next `pulumi up` does, in a reviewer's words: changes, cost, access, policy verdicts",
  usage: SYNOPSIS,
  run: planCommand,
};
