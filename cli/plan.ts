import { parseArgs } from "node:util";
import type { Stack } from "@pulumi/pulumi/automation";
import { isNotFound, ProxyClient } from "../sdk";
import { describeAccess } from "./planAccess";
import { describeChanges } from "./planChanges";
import { type LiveAllocationLookup, needsLiveAllocations, planCost } from "./planCost";
import type { PlanJson } from "./planModel";
import { formatPlanMarkdown, formatPlanText } from "./planRender";
import { type PlannedStep, previewSteps } from "./planSteps";
import {
  describeFailure,
  ENVIRONMENT_USAGE,
  parseOrExplain,
  STACK_OPTIONS,
  STACK_USAGE,
  type StackTarget,
  selectStack,
  stackTarget,
  UsageError,
} from "./stack";

const USAGE = `usage: pulumi-proxy plan --stack <name> [--cwd <dir>] [--refresh] [--json | --markdown] [--pulumi-root <dir>]

Runs \`pulumi preview\` on an existing stack and prints what it will do in a reviewer's words:
every change with the properties that change, what it will cost (exactly, by the API's rules and
the allocations' live state) and what it does to access (keys and scopes, logins, ceilings).
Secrets are never shown.

${STACK_USAGE}
  --refresh            refresh the state from the API first, as \`pulumi preview --refresh\`
  --json               print the plan as JSON (a stable shape, "version": 1) instead of text
  --markdown           print the plan as Markdown, for a pull-request comment or a job summary
  --help               this text

${ENVIRONMENT_USAGE}
Prices come from the API named by the stack's proxy:apiUrl and proxy:apiKey (or PROXY_API_URL and
PROXY_API_KEY); the key needs proxy-users:read.

Exit codes: 0 no changes, 2 changes, 1 error.`;

export const PLAN_EXIT = { noChanges: 0, error: 1, changes: 2 } as const;

export interface PlanArgs extends StackTarget {
  refresh: boolean;
  format: "text" | "json" | "markdown";
}

export function parsePlanArgs(argv: string[]): PlanArgs | "help" {
  const values = parseOrExplain(
    () =>
      parseArgs({
        args: argv,
        strict: true,
        options: {
          ...STACK_OPTIONS,
          refresh: { type: "boolean" },
          json: { type: "boolean" },
          markdown: { type: "boolean" },
          help: { type: "boolean", short: "h" },
        },
      }).values,
  );
  if (values.help) return "help";
  if (values.json && values.markdown) throw new UsageError("--json and --markdown exclude each other: pick one");
  const format = values.json ? "json" : values.markdown ? "markdown" : "text";
  return { ...stackTarget(values), refresh: values.refresh === true, format };
}

/** The API the stack's provider talks to: its config first, the environment as the provider's fallback. */
async function apiClientFor(stack: Stack): Promise<ProxyClient> {
  const config = await stack.getAllConfig();
  const baseUrl = config["proxy:apiUrl"]?.value || process.env.PROXY_API_URL;
  const apiKey = config["proxy:apiKey"]?.value || process.env.PROXY_API_KEY;
  if (!baseUrl || !apiKey) {
    throw new Error(
      "the plan replaces an address and needs its live state to price it, but the stack has no proxy:apiUrl/proxy:apiKey config and PROXY_API_URL/PROXY_API_KEY are not set.",
    );
  }
  return new ProxyClient({ baseUrl, apiKey, userAgent: "pulumi-proxy-plan" });
}

async function liveLookup(stack: Stack, steps: PlannedStep[]): Promise<LiveAllocationLookup> {
  if (!needsLiveAllocations(steps)) return async () => undefined;
  const client = await apiClientFor(stack);
  return async (id) => {
    try {
      return await client.ips.get(id);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw new Error(`cannot read allocation ${id} to price its replacement: ${(error as Error).message}`, {
        cause: error,
      });
    }
  };
}

/** Previews the stack and builds the whole plan: changes, cost and access. */
export async function makePlan(stack: Stack, args: PlanArgs): Promise<PlanJson> {
  const steps = await previewSteps(stack, args.refresh);
  const plannedAt = new Date();
  const lookup = await liveLookup(stack, steps);
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
    changes: describeChanges(steps),
    cost: await planCost(steps, lookup, plannedAt.getTime()),
    access: describeAccess(steps),
  };
}

export async function runPlan(args: PlanArgs): Promise<number> {
  const plan = await makePlan(await selectStack(args), args);
  const output =
    args.format === "json"
      ? JSON.stringify(plan, null, 2)
      : args.format === "markdown"
        ? formatPlanMarkdown(plan)
        : formatPlanText(plan);
  process.stdout.write(`${output}\n`);
  return plan.hasChanges ? PLAN_EXIT.changes : PLAN_EXIT.noChanges;
}

/** `pulumi-proxy plan …`: its own usage and errors; exit 0 no changes, 2 changes, 1 error. */
export async function planCommand(argv: string[]): Promise<number> {
  let args: PlanArgs | "help" | undefined;
  try {
    args = parsePlanArgs(argv);
    if (args === "help") {
      process.stdout.write(`${USAGE}\n`);
      return PLAN_EXIT.noChanges;
    }
    return await runPlan(args);
  } catch (error) {
    const message =
      args && args !== "help" ? describeFailure(error, args) : error instanceof Error ? error.message : String(error);
    process.stderr.write(`pulumi-proxy plan: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
    return PLAN_EXIT.error;
  }
}
