import { ConflictError, ErrorCode, type IpAllocation as WireAllocation } from "../../../sdk";
import type { ProviderContext } from "../../core/context";
import * as d from "../../core/descriptor";
import { explain, explained, unlessGone } from "../../core/errors";
import { changeOnce, createRecorded, keyedFor } from "../../core/exactlyOnce";
import { swapRequested, unheldTriggerAdvice } from "./retire";
import { ipAllocationReview } from "./review";
import { type Inputs, inputs, label, outputs, reads, type Shape, type State, type Stored } from "./schema";

type LastReplacement = Pick<State, "lastReplacedIp" | "lastReplacementChargeCents">;
const NEVER_REPLACED: LastReplacement = { lastReplacedIp: null, lastReplacementChargeCents: null };

/** `requestedCity`: the city the inputs declare; a refresh keeps the one recorded. */
function toState(
  allocation: WireAllocation,
  inputs: Inputs,
  last: LastReplacement,
  requestedCity?: string | null,
): Stored {
  return d.stateOf<Shape>(inputs, {
    allocationId: allocation.id,
    ip: allocation.ip,
    // The inputs, not the API's view: a replacement elsewhere in the country is not a change of inputs.
    product: inputs.product,
    country: inputs.country,
    // The API's: the address may have moved to another city (a swap outside Pulumi), which is drift.
    city: allocation.city,
    requestedCity: requestedCity === undefined ? (inputs.city ?? null) : requestedCity,
    asn: allocation.asn,
    health: allocation.health,
    blacklists: allocation.blacklists,
    allocatedAt: allocation.allocated_at,
    renewsAt: allocation.renews_at,
    replacementsThisMonth: allocation.replacements_this_month,
    freeReplacementsRemaining: allocation.free_replacements_remaining,
    lastReplacedIp: last.lastReplacedIp,
    lastReplacementChargeCents: last.lastReplacementChargeCents,
  });
}

async function adopt({ client }: ProviderContext, inputs: Inputs, id: string) {
  const existing = await explained(`IpAllocation ${id}`, "adopt it", client.ips.get(id));
  const mismatch = (["product", "country", "city"] as const).filter(
    (key) => inputs[key] !== undefined && inputs[key] !== existing[key],
  );
  if (mismatch.length > 0) {
    const wanted = mismatch.map((key) => `${key} "${existing[key]}"`).join(", ");
    throw new Error(`IpAllocation ${existing.ip}: adoptId ${id} has ${wanted}. Set the same values to adopt it.`);
  }
  return { id: existing.id, outs: toState(existing, inputs, NEVER_REPLACED) };
}

/** Swaps the address in place, once per trigger, within the charge ceiling. */
async function swap(ctx: ProviderContext, id: string, olds: State, news: Inputs) {
  const { client } = ctx;
  // Absent means "no charged replacement": the API then refuses anything beyond the free ones.
  const ceiling = news.maxReplacementChargeCents ?? 0;
  try {
    // In recover's run only: an address other than the state's means the killed run swapped it and
    // nothing recorded that (the state is from before it); past the API's 24 hours its key would swap,
    // and charge, again. Outside recovery the same difference is a swap made outside Pulumi, and a
    // changed trigger still asks for one more (as plan priced it).
    const now = ctx.adoption ? await unlessGone(() => client.ips.get(id)) : undefined;
    if (now && olds.ip && now.ip !== olds.ip) {
      ctx.warn(
        `${label(olds)}: ${olds.ip} was already replaced by ${now.ip} (an interrupted run); not replacing again.`,
      );
      return toState(now, news, { lastReplacedIp: olds.ip, lastReplacementChargeCents: null });
    }
    const body = { reason: news.replaceReason, keep_city: news.keepCity, max_charge_cents: ceiling };
    // Once per replaceTrigger: a repeat after a crash replays the swap (and its charge) instead of
    // swapping and charging again. Undefined: a killed run already swapped it with other settings.
    const keyed = keyedFor(news, [id, news.replaceTrigger ?? null], label(olds));
    const result = await changeOnce(keyed, "replace", (idempotencyKey) =>
      client.ips.replace(id, body, { idempotencyKey }),
    );
    // A replayed answer describes the address as it was then; the allocation as it is now is read.
    const current = await client.ips.get(id);
    const last = result
      ? { lastReplacedIp: result.replaced_ip, lastReplacementChargeCents: result.charge?.amount_cents ?? 0 }
      : olds;
    return toState(current, news, last);
  } catch (error) {
    if (error instanceof ConflictError && error.code === ErrorCode.enum.charge_exceeds_limit) {
      const cost = error.details?.charge_cents;
      throw new Error(
        `${label(olds)}: replacing it would cost ${cost} cents, above maxReplacementChargeCents (${news.maxReplacementChargeCents ?? "unset, so 0"}). ` +
          `This month's free replacements are used; raise maxReplacementChargeCents to at least ${cost} to allow a charged replacement.`,
        { cause: error },
      );
    }
    throw explain(label(olds), "replace its address", error);
  }
}

export const ipAllocation = d.describeKind({
  description: "An allocated ISP or dedicated address. The resource id is the stable allocation id; `ip` may change.",
  ...reads,
  type: "IpAllocation",
  example: { product: "isp", country: "us", city: "new york" },
  inputs,
  outputs,
  secretOutputs: [],
  statusOutputs: ["health", "blacklists", "renewsAt", "replacementsThisMonth", "freeReplacementsRemaining"],
  label,
  review: ipAllocationReview,
  rules: {
    advice: (olds, news) => unheldTriggerAdvice(label(olds), olds, news.replaceTrigger),

    async create(ctx, inputs) {
      if (inputs.adoptId) return adopt(ctx, inputs, inputs.adoptId);
      // Recover's run, past the API's 24 hours: an address a killed run allocated here is taken over,
      // not allocated (and charged) again (adoption.ts). Addresses of one place are interchangeable.
      const orphan = await ctx.adoption?.claim(
        "IpAllocation",
        () => ctx.client.ips.list(),
        (allocation) => allocation.allocated_at,
        (allocation) =>
          allocation.product === inputs.product &&
          allocation.country === inputs.country &&
          (inputs.city === undefined || allocation.city === inputs.city),
      );
      if (orphan) {
        ctx.warn(
          `${label(inputs)}: took over allocation ${orphan.id} (${orphan.ip}), which an interrupted run made and no state recorded, instead of allocating and paying again.`,
        );
        return { id: orphan.id, outs: toState(orphan, inputs, NEVER_REPLACED) };
      }
      const body = { product: inputs.product, country: inputs.country, city: inputs.city };
      // Allocation is charged: the key makes a repeat after a crash a replay, not a second term.
      return createRecorded(
        keyedFor(inputs, [inputs.product, inputs.country, inputs.city], label(inputs), ctx.adoption),
        (request) => ctx.client.ips.allocate(body, request),
        (id) => ctx.read(reads, id),
        (allocation) => toState(allocation, inputs, NEVER_REPLACED),
      );
    },

    async read(ctx, id, olds) {
      const allocation = await ctx.read(reads, id);
      // State from before `requestedCity` recorded the declared city (or the one the API chose) as `city`.
      const requested = olds.requestedCity === undefined ? olds.city : olds.requestedCity;
      if (!allocation) return undefined;
      // An import has no recorded inputs: what the API reports is what the allocation was made with.
      const made = {
        ...olds,
        product: olds.product ?? allocation.product,
        country: olds.country ?? allocation.country,
      };
      return toState(allocation, made, olds, requested ?? null);
    },

    async update(ctx, id, olds, news) {
      if (swapRequested(olds, news.replaceTrigger)) return swap(ctx, id, olds, news);
      return toState(await explained(label(olds), "read it", ctx.client.ips.get(id)), news, olds);
    },

    async delete({ client }, id, olds) {
      await explained(
        label(olds),
        "release it",
        unlessGone(() => client.ips.release(id)),
      );
    },
  },
});
