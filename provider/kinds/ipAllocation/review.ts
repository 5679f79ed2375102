import { FREE_REPLACEMENTS_PER_MONTH, quoteReplacement, TERM_DAYS, TERM_PRICE_CENTS } from "../../../contract/pricing";
import type { KindReview, ReviewChange } from "../../core/descriptor";
import { adoptionNotes, type CostItem, type LiveAccount } from "../../core/review";
import { swapRequested, unheldTriggerAdvice } from "./retire";
import { label, type Shape } from "./schema";

type Change = ReviewChange<Shape>;

const ordinal = (n: number) =>
  `${n}${n % 10 === 1 && n !== 11 ? "st" : n % 10 === 2 && n !== 12 ? "nd" : n % 10 === 3 && n !== 13 ? "rd" : "th"}`;

/** The swap `up` makes, by the provider's own rule: only a trigger that asks for one. */
const swaps = ({ op, olds, news }: Change) =>
  op === "update" && !!olds && !!news && swapRequested(olds, news.replaceTrigger);

function allocationItem({ urn, name, op, olds, news }: Change): CostItem[] {
  if (!news || news.adoptId !== undefined) return [];
  const place = [news.country, news.city].filter((part) => typeof part === "string").join("/");
  const replacing = op === "replace" ? `, replacing ${olds?.ip ?? "the old allocation"} (released without refund)` : "";
  const amountCents = TERM_PRICE_CENTS[news.product];
  if (amountCents === undefined) {
    throw new Error(
      `IpAllocation ${name}: product is ${JSON.stringify(news.product)}, not isp or dedicated; the plan cannot price it. Set product to a literal "isp" or "dedicated".`,
    );
  }
  const reason = `new ${news.product} allocation in ${place}: one ${TERM_DAYS}-day term paid up front${replacing}`;
  return [{ urn, name, kind: "allocation", product: news.product, amountCents, reason }];
}

async function replacementItem(change: Change, { allocation: live, nowMs }: LiveAccount): Promise<CostItem[]> {
  const allocationId = change.olds?.allocationId ?? change.id ?? "";
  const allocation = await live(allocationId);
  if (!allocation) {
    throw new Error(
      `IpAllocation ${change.name}: allocation ${allocationId} no longer exists at the API, so its replacement cannot be priced. Run the plan with --refresh.`,
    );
  }
  const quote = quoteReplacement(
    {
      product: allocation.product,
      replacementsThisMonth: allocation.replacements_this_month,
      renewsAtMs: Date.parse(allocation.renews_at),
    },
    nowMs,
  );
  // The same ceiling `up` sends: absent means 0, so the API refuses anything beyond the free ones.
  const maxChargeCents = change.news?.maxReplacementChargeCents ?? 0;
  const willBeRefused = quote.chargeCents > maxChargeCents;
  const nth = ordinal(allocation.replacements_this_month + 1);
  const reason = quote.free
    ? `${nth} replacement of ${allocation.ip} this month: free (${allocation.free_replacements_remaining} of ${FREE_REPLACEMENTS_PER_MONTH} free left)`
    : `${nth} replacement of ${allocation.ip} this month, beyond the ${FREE_REPLACEMENTS_PER_MONTH} free: ` +
      `${TERM_PRICE_CENTS[allocation.product]} × ${quote.remainingTermDays} days left of the term / ${TERM_DAYS}, rounded up` +
      (willBeRefused
        ? `; above maxReplacementChargeCents (${maxChargeCents}): will be refused`
        : `; within maxReplacementChargeCents (${maxChargeCents})`);
  return [
    {
      urn: change.urn,
      name: change.name,
      kind: "replacement",
      product: allocation.product,
      amountCents: quote.chargeCents,
      reason,
      allocationId: allocation.id,
      ip: allocation.ip,
      free: quote.free,
      freeReplacementsRemaining: allocation.free_replacements_remaining,
      remainingTermDays: quote.remainingTermDays,
      maxChargeCents,
      willBeRefused,
    },
  ];
}

function notes(change: Change): string[] {
  const { op, olds, news } = change;
  const advice = op === "update" && olds && news ? unheldTriggerAdvice(label(olds), olds, news.replaceTrigger) : [];
  return [
    ...(swaps(change) ? [`address replaced in place (same allocation), reason "${news?.replaceReason}"`] : []),
    ...advice,
    ...(op === "replace" ? [`a new allocation replaces ${olds?.ip ?? "?"}, which is released`] : []),
    ...(op === "delete" ? [`address ${olds?.ip ?? "?"} released; releasing refunds nothing`] : []),
    ...adoptionNotes(change),
  ];
}

/**
 * What a change of an allocation costs, from the rules the API charges by (contract/pricing.ts): a
 * new allocation pays one term; a swap in place is free while the allocation has free ones left this
 * UTC month (counted by the API, so swaps made outside Pulumi count too), and is otherwise prorated
 * over the days left in its term.
 */
export const ipAllocationReview: KindReview<Shape> = {
  notes,
  cost: async (change, pricing) => {
    if (change.op === "create" || change.op === "replace") return allocationItem(change);
    return swaps(change) ? replacementItem(change, pricing) : [];
  },
};
