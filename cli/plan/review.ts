import { formatDollars } from "../../contract/pricing";
import { type Descriptor, type ReviewChange, readInputs, upgradeState } from "../../provider/core/descriptor";
import type { AccessEffects, LiveAccount } from "../../provider/core/review";
import { kindOfType } from "../../provider/kinds";
import { propertyDifferences } from "../engineEvents";
import type { CostSection, PropertyChange, ResourceChange } from "./model";
import type { PlannedStep } from "./steps";

/**
 * The plan asks each kind's descriptor what a step means: the same rules `up` runs decide whether a
 * key rotates, an address is swapped, a user is re-enabled, and what the API charges. This file only
 * gathers their answers across the steps.
 */

/** The inputs that change (the steps hold them masked), and whether each forces the replacement. */
function propertyChanges(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  replaceKeys: string[],
): PropertyChange[] {
  return propertyDifferences(before, after).map(({ path, before: old, after: next }) => ({
    path,
    ...(old !== undefined && old !== null ? { before: old } : {}),
    ...(next !== undefined && next !== null ? { after: next } : {}),
    forcesReplacement: replaceKeys.includes(path.split(".")[0] ?? path),
  }));
}

interface Reviewed {
  step: PlannedStep;
  kind: Descriptor | undefined;
  change: ReviewChange;
}

/** Each step as its kind sees it: the recorded state upgraded as the provider reads it, the inputs as checked. */
export function reviewSteps(steps: PlannedStep[]): Reviewed[] {
  return steps.map((step) => {
    const kind = kindOfType(step.type);
    const recorded = { ...step.oldInputs, ...step.oldOutputs };
    const change: ReviewChange = {
      urn: step.urn,
      name: step.name,
      op: step.op,
      ...(step.id ? { id: step.id } : {}),
      ...(kind && step.op !== "create" ? { olds: upgradeState(kind, recorded) } : {}),
      ...(kind && step.newInputs ? { news: readInputs(kind, step.newInputs) } : {}),
    };
    return { step, kind, change };
  });
}

/** Every resource the plan changes, with its changed inputs and what the change means. */
export function describeChanges(reviewed: Reviewed[]): ResourceChange[] {
  return reviewed.map(({ step, kind, change }) => ({
    urn: step.urn,
    name: step.name,
    type: step.type,
    op: step.op,
    properties:
      step.op === "delete" ? [] : propertyChanges(step.oldInputs ?? {}, step.newInputs ?? {}, step.replaceKeys),
    notes: kind?.review.notes(change) ?? [],
  }));
}

/** Every charge the plan incurs; a replacement the API will refuse charges nothing. */
export async function planCost(reviewed: Reviewed[], live: LiveAccount): Promise<CostSection> {
  const items = [];
  for (const { kind, change } of reviewed) items.push(...((await kind?.review.cost?.(change, live)) ?? []));
  const totalCents = items.filter((item) => !item.willBeRefused).reduce((sum, item) => sum + item.amountCents, 0);
  return { currency: "usd", totalCents, total: formatDollars(totalCents), items };
}

/** Who gains or loses access: keys and their scopes, gateway logins, and traffic ceilings. */
export async function describeAccess(reviewed: Reviewed[], live: LiveAccount): Promise<AccessEffects> {
  const access: AccessEffects = { keys: [], users: [], ceilings: [] };
  for (const { kind, change } of reviewed) {
    const effects = (await kind?.review.access?.(change, live)) ?? {};
    access.keys.push(...(effects.keys ?? []));
    access.users.push(...(effects.users ?? []));
    access.ceilings.push(...(effects.ceilings ?? []));
  }
  return access;
}
