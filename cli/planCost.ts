import {
  FREE_REPLACEMENTS_PER_MONTH,
  formatDollars,
  quoteReplacement,
  TERM_DAYS,
  TERM_PRICE_CENTS,
} from "../contract/pricing";
import type { IpAllocation as WireAllocation } from "../sdk";
import type { CostItem, CostSection } from "./planModel";
import type { PlannedStep } from "./planSteps";

/** The allocation as the API reports it now, or undefined when it no longer exists. */
export type LiveAllocationLookup = (allocationId: string) => Promise<WireAllocation | undefined>;

type Product = keyof typeof TERM_PRICE_CENTS;

function productOf(step: PlannedStep, value: unknown): Product {
  if (value === "isp" || value === "dedicated") return value;
  throw new Error(
    `IpAllocation ${step.name}: product is ${JSON.stringify(value)}, not isp or dedicated; the plan cannot price it. Set product to a literal "isp" or "dedicated".`,
  );
}

const ordinal = (n: number) =>
  `${n}${n % 10 === 1 && n !== 11 ? "st" : n % 10 === 2 && n !== 12 ? "nd" : n % 10 === 3 && n !== 13 ? "rd" : "th"}`;

function allocationItem(step: PlannedStep): CostItem | undefined {
  const news = step.newInputs ?? {};
  if (news.adoptId !== undefined) return undefined;
  const product = productOf(step, news.product);
  const place = [news.country, news.city].filter((part) => typeof part === "string").join("/");
  const replacing =
    step.op === "replace"
      ? `, replacing ${String(step.oldOutputs?.ip ?? "the old allocation")} (released without refund)`
      : "";
  return {
    urn: step.urn,
    name: step.name,
    kind: "allocation",
    product,
    amountCents: TERM_PRICE_CENTS[product],
    reason: `new ${product} allocation in ${place}: one ${TERM_DAYS}-day term paid up front${replacing}`,
  };
}

async function replacementItem(step: PlannedStep, lookup: LiveAllocationLookup, nowMs: number): Promise<CostItem> {
  const allocationId = String(step.oldOutputs?.allocationId ?? step.id);
  const live = await lookup(allocationId);
  if (!live) {
    throw new Error(
      `IpAllocation ${step.name}: allocation ${allocationId} no longer exists at the API, so its replacement cannot be priced. Run the plan with --refresh.`,
    );
  }
  const quote = quoteReplacement(
    {
      product: live.product,
      replacementsThisMonth: live.replacements_this_month,
      renewsAtMs: Date.parse(live.renews_at),
    },
    nowMs,
  );
  const rawMax = step.newInputs?.maxReplacementChargeCents;
  const maxChargeCents = typeof rawMax === "number" ? rawMax : 0;
  const willBeRefused = quote.chargeCents > maxChargeCents;
  const nth = ordinal(live.replacements_this_month + 1);
  const reason = quote.free
    ? `${nth} replacement of ${live.ip} this month: free (${live.free_replacements_remaining} of ${FREE_REPLACEMENTS_PER_MONTH} free left)`
    : `${nth} replacement of ${live.ip} this month, beyond the ${FREE_REPLACEMENTS_PER_MONTH} free: ` +
      `${TERM_PRICE_CENTS[live.product]} × ${quote.remainingTermDays} days left of the term / ${TERM_DAYS}, rounded up` +
      (willBeRefused
        ? `; above maxReplacementChargeCents (${maxChargeCents}): will be refused`
        : `; within maxReplacementChargeCents (${maxChargeCents})`);
  return {
    urn: step.urn,
    name: step.name,
    kind: "replacement",
    product: live.product,
    amountCents: quote.chargeCents,
    reason,
    allocationId: live.id,
    ip: live.ip,
    free: quote.free,
    freeReplacementsRemaining: live.free_replacements_remaining,
    remainingTermDays: quote.remainingTermDays,
    maxChargeCents,
    willBeRefused,
  };
}

/**
 * Every charge the plan incurs, from the same rules the API charges by (contract/pricing.ts): a new
 * allocation pays one term; a replacement in place is free while the allocation has free ones left
 * this UTC month (counted by the API, so replacements made outside Pulumi count too), and is
 * otherwise prorated over the days left in its term as of `nowMs`.
 */
export async function planCost(
  steps: PlannedStep[],
  lookup: LiveAllocationLookup,
  nowMs: number,
): Promise<CostSection> {
  const items: CostItem[] = [];
  for (const step of steps) {
    if (step.type !== "proxy:IpAllocation") continue;
    if (step.op === "create" || step.op === "replace") {
      const item = allocationItem(step);
      if (item) items.push(item);
    } else if (replacesInPlace(step)) {
      items.push(await replacementItem(step, lookup, nowMs));
    }
  }
  const totalCents = items.filter((item) => !item.willBeRefused).reduce((sum, item) => sum + item.amountCents, 0);
  return { currency: "usd", totalCents, total: formatDollars(totalCents), items };
}

/** An update that swaps the address: the provider replaces whenever `replaceTrigger` changes. */
function replacesInPlace(step: PlannedStep): boolean {
  if (step.type !== "proxy:IpAllocation" || step.op !== "update") return false;
  return { ...step.oldInputs, ...step.oldOutputs }.replaceTrigger !== step.newInputs?.replaceTrigger;
}

/** Whether any step needs live allocation data, so the plan contacts the API only when it must. */
export function needsLiveAllocations(steps: PlannedStep[]): boolean {
  return steps.some(replacesInPlace);
}
