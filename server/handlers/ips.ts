import { LIST_LIMIT_DEFAULT } from "../../contract/common";
import type { AllocateIpBody, IpListQuery, ReplaceIpBody } from "../../contract/ips";
import { quoteReplacement, TERM_PRICE_CENTS } from "../../contract/pricing";
import { requireScopes } from "../auth";
import { utcMonth } from "../clock";
import { ApiError, notFound } from "../errors";
import { pickAddress } from "../pool";
import { renderAllocation, renewsAt, replacementsThisMonth, termIndex } from "../render";
import type { AllocationRecord, Store } from "../store";
import { newId } from "../tokens";
import { type HandlerContext, type HandlerTable, pathParam } from "./context";

/** `{ip}` may be the current address or the stable allocation id. */
function findAllocation(ctx: HandlerContext): AllocationRecord {
  const segment = pathParam(ctx, "ip");
  const allocation = segment.startsWith("alloc_")
    ? ctx.store.allocations.get(segment)
    : ctx.store.allocationByIp(segment);
  if (!allocation) throw notFound("The address or allocation");
  return allocation;
}

function requireFunds(store: Store, chargeCents: number): void {
  if (chargeCents > store.balanceCents) {
    throw new ApiError(
      "insufficient_funds",
      `This needs ${chargeCents} cents but the balance is ${store.balanceCents} cents.`,
      {
        charge_cents: chargeCents,
        balance_cents: store.balanceCents,
      },
    );
  }
}

function noCapacity(country: string, city: string | undefined): ApiError {
  const where = city === undefined ? country : `${city}, ${country}`;
  return new ApiError("no_capacity", `No free address is available in ${where}.`, {
    country,
    ...(city === undefined ? {} : { city }),
  });
}

/** The shared pricing rule (contract/pricing.ts), fed with this allocation as the API reports it. */
function replacementChargeCents(allocation: AllocationRecord, now: number): number {
  const live = {
    product: allocation.product,
    replacementsThisMonth: replacementsThisMonth(allocation, now),
    renewsAtMs: renewsAt(allocation, now),
  };
  return quoteReplacement(live, now).chargeCents;
}

export const ipHandlers: HandlerTable<"listIps" | "getIp" | "allocateIp" | "releaseIp" | "replaceIp"> = {
  listIps(ctx) {
    const query = ctx.query as IpListQuery;
    const page = ctx.store.allocations.page({
      cursor: query.cursor,
      limit: query.limit ?? LIST_LIMIT_DEFAULT,
      filter: (a) =>
        (query.product === undefined || a.product === query.product) &&
        (query.country === undefined || a.country === query.country) &&
        (query.city === undefined || a.city === query.city),
    });
    return { ips: page.items.map((a) => renderAllocation(a, ctx.now)), next_cursor: page.nextCursor };
  },

  getIp(ctx) {
    return renderAllocation(findAllocation(ctx), ctx.now);
  },

  /** Allocation is paid up front, one term, so it needs the balance to cover it (402 otherwise). */
  allocateIp(ctx) {
    const body = ctx.body as AllocateIpBody;
    const choice = pickAddress(body, (ip) => ctx.store.isAllocated(ip));
    if (!choice) throw noCapacity(body.country, body.city);
    const price = TERM_PRICE_CENTS[body.product];
    requireFunds(ctx.store, price);
    const allocation: AllocationRecord = {
      id: newId("alloc"),
      seq: ctx.store.nextSeq(),
      ip: choice.ip,
      product: body.product,
      country: choice.place.country,
      city: choice.place.city,
      asn: choice.place.asn,
      allocatedAt: ctx.now,
      health: "good",
      blacklists: 0,
      replacementMonth: null,
      replacementsInMonth: 0,
      retiredIps: [],
    };
    ctx.store.addAllocation(allocation);
    ctx.store.addCharge("ip_allocation", price, allocation.id, ctx.now);
    return renderAllocation(allocation, ctx.now);
  },

  releaseIp(ctx) {
    ctx.store.deleteAllocation(findAllocation(ctx));
    return undefined;
  },

  replaceIp(ctx) {
    const body = ctx.body as ReplaceIpBody;
    const allocation = findAllocation(ctx);
    const { now, store } = ctx;
    const chargeCents = replacementChargeCents(allocation, now);
    if (chargeCents > 0) requireScopes(ctx.caller, ["proxy-users:write", "billing:write"]);
    const term = termIndex(allocation, now);
    const retired = new Set(allocation.retiredIps.filter((r) => r.term === term).map((r) => r.ip));
    const city = body.keep_city ? allocation.city : undefined;
    const choice = pickAddress({ country: allocation.country, city }, (ip) => store.isAllocated(ip) || retired.has(ip));
    if (!choice) throw noCapacity(allocation.country, city);
    if (body.max_charge_cents !== undefined && chargeCents > body.max_charge_cents) {
      throw new ApiError(
        "charge_exceeds_limit",
        `This replacement costs ${chargeCents} cents, more than max_charge_cents ${body.max_charge_cents}.`,
        {
          charge_cents: chargeCents,
          max_charge_cents: body.max_charge_cents,
        },
      );
    }
    requireFunds(store, chargeCents);

    const replacedIp = allocation.ip;
    const month = utcMonth(now);
    allocation.replacementsInMonth = replacementsThisMonth(allocation, now) + 1;
    allocation.replacementMonth = month;
    allocation.retiredIps = [...allocation.retiredIps.filter((r) => r.term === term), { ip: replacedIp, term }];
    store.moveAllocation(allocation, choice.ip);
    allocation.city = choice.place.city;
    allocation.asn = choice.place.asn;
    allocation.health = "good";
    allocation.blacklists = 0;
    const charge = chargeCents > 0 ? store.addCharge("ip_replacement", chargeCents, allocation.id, now) : null;
    return {
      allocation: renderAllocation(allocation, now),
      replaced_ip: replacedIp,
      charge: charge && { id: charge.id, amount_cents: charge.amountCents, currency: "usd", prorated: true },
    };
  },
};
