import type { Stack } from "@pulumi/pulumi/automation";
import type { PlanJson } from "../plan/model";
import { formatPlanMarkdown, formatPlanText } from "../plan/render";
import { eachFleetStack, type FleetStackResult, fleetFooter } from "./reports";

/** What `plan --fleet --json` prints (`version: 1`): each stack's plan, or its error, and the fleet's total cost. */
export interface FleetPlanJson {
  version: 1;
  fleet: string;
  hasChanges: boolean;
  failed: number;
  totalCents: number;
  stacks: FleetStackResult<PlanJson>[];
}

/**
 * `pulumi-proxy plan --fleet`: every stack's plan, one report. Exit 3 when a stack's plan has a
 * mandatory policy violation, 1 when a stack failed, 2 when any stack changes, else 0.
 */
export async function runFleetPlan(
  fleetPath: string,
  options: { format: "text" | "json" | "markdown"; pulumiRoot?: string },
  makePlan: (stack: Stack) => Promise<PlanJson>,
): Promise<number> {
  const { spec, results } = await eachFleetStack(fleetPath, options.pulumiRoot, makePlan);
  const plans = results.flatMap((result) => (result.value ? [result.value] : []));
  const changed = plans.filter((plan) => plan.hasChanges).length;
  const failed = results.filter((result) => result.error !== undefined).length;
  if (options.format === "json") {
    const json: FleetPlanJson = {
      version: 1,
      fleet: spec.file,
      hasChanges: changed > 0,
      failed,
      totalCents: plans.reduce((sum, plan) => sum + plan.cost.totalCents, 0),
      stacks: results,
    };
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    const render = options.format === "markdown" ? formatPlanMarkdown : formatPlanText;
    process.stdout.write(`${[...plans.map(render), fleetFooter(results, changed, "changes")].join("\n\n")}\n`);
  }
  if (plans.some((plan) => plan.policy?.failed)) return 3;
  return failed > 0 ? 1 : changed > 0 ? 2 : 0;
}
