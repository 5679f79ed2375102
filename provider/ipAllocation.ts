import { z } from "zod";
import { CityName, CountryCode, IpHealth, IpPathSegment, IpProduct, ReplaceIpBody, Timestamp } from "../contract";
import { ConflictError, ErrorCode, type IpAllocation as WireAllocation } from "../sdk";
import { providerContext } from "./context";
import * as d from "./declaration";
import { changeOnce, createRecorded, keyedFor } from "./exactlyOnce";
import { swapRequested, warnIfElsewhere } from "./retire";
import { changed, explain, explained, unlessGone } from "./shared";
import stubs from "./stubs/ipAllocation";

const lowercase = (text: string) => text.trim().toLowerCase();

export const ipAllocation = d.declareResource({
  inputs: {
    /** "isp" or "dedicated". Changing it replaces the allocation. */
    product: IpProduct,
    /** Two-letter country code, e.g. "de". Changing it replaces the allocation. */
    country: z.string().transform(lowercase).pipe(CountryCode),
    /** Lowercase city name; any city of the country when absent. Changing it replaces the allocation. */
    city: z.string().transform(lowercase).pipe(CityName).optional(),
    /**
     * A change of this value swaps the address in place (same allocation id), using the settings below.
     * An IP address names the address to retire: it swaps only while the allocation holds it.
     */
    replaceTrigger: d.Trigger.optional(),
    /** Why the address is replaced: blacklisted, unreachable, slow, other or any text up to 200 characters. Default "other". */
    replaceReason: ReplaceIpBody.shape.reason.default("other"),
    /** Keep the replacement in the same city. */
    keepCity: z.boolean().default(false),
    /**
     * The most a replacement may cost, in cents. Two replacements per allocation and month are free;
     * later ones are refused unless this ceiling covers their prorated price.
     */
    maxReplacementChargeCents: ReplaceIpBody.shape.max_charge_cents,
    /** Take over the existing allocation with this id (alloc_…) or address instead of allocating one. */
    adoptId: IpPathSegment.optional(),
  },
  outputs: {
    allocationId: z.string(),
    ip: z.string(),
    product: IpProduct,
    country: z.string(),
    /** The city asked for, or the one the API chose when none was. */
    city: z.string(),
    asn: z.string(),
    health: IpHealth,
    blacklists: z.number(),
    allocatedAt: Timestamp,
    renewsAt: Timestamp,
    replacementsThisMonth: z.number(),
    freeReplacementsRemaining: z.number(),
    /** The address the last replacement by this stack retired; null before the first. */
    lastReplacedIp: z.string().nullable(),
    /** What the last replacement by this stack cost; null before the first. */
    lastReplacementChargeCents: z.number().nullable(),
  },
  secretOutputs: [],
  statusOutputs: ["health", "blacklists", "renewsAt", "replacementsThisMonth", "freeReplacementsRemaining"],
});
type Inputs = d.InputsOf<typeof ipAllocation>;
type State = d.StateOf<typeof ipAllocation>;
type Stored = d.StoredOf<typeof ipAllocation>;
type LastReplacement = Pick<State, "lastReplacedIp" | "lastReplacementChargeCents">;
const NEVER_REPLACED: LastReplacement = { lastReplacedIp: null, lastReplacementChargeCents: null };

const label = (state: { ip?: string; country?: unknown; city?: unknown }) =>
  `IpAllocation ${state.ip ?? [state.country, state.city].filter((part) => typeof part === "string").join("/")}`;

function toState(allocation: WireAllocation, inputs: Inputs, last: LastReplacement): Stored {
  return d.stateOf(ipAllocation, inputs, {
    allocationId: allocation.id,
    ip: allocation.ip,
    // The inputs, not the API's view: a replacement elsewhere in the country is not a change of inputs.
    product: inputs.product,
    country: inputs.country,
    city: inputs.city ?? allocation.city,
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

export const ipAllocationHandler = d.handlerFor(ipAllocation, {
  diff: (olds, news) => {
    warnIfElsewhere(label(olds), olds, news.replaceTrigger);
    return {
      updates: [
        ...changed(olds, news, ["replaceReason", "keepCity", "maxReplacementChargeCents"]),
        ...(swapRequested(olds, news.replaceTrigger) ? ["replaceTrigger"] : []),
      ],
      // Without a city, any city of the country satisfies the inputs, so the address the API chose stays.
      replaces: changed(olds, news, ["product", "country", ...(news.city === undefined ? [] : ["city" as const])]),
    };
  },

  async create(inputs) {
    const { client, reads } = providerContext();
    if (inputs.adoptId) {
      const existing = await explained(`IpAllocation ${inputs.adoptId}`, "adopt it", client.ips.get(inputs.adoptId));
      const mismatch = (["product", "country", "city"] as const).filter(
        (key) => inputs[key] !== undefined && inputs[key] !== existing[key],
      );
      if (mismatch.length > 0) {
        const wanted = mismatch.map((key) => `${key} "${existing[key]}"`).join(", ");
        throw new Error(
          `IpAllocation ${existing.ip}: adoptId ${inputs.adoptId} has ${wanted}. Set the same values to adopt it.`,
        );
      }
      return { id: existing.id, outs: toState(existing, inputs, NEVER_REPLACED) };
    }
    const body = { product: inputs.product, country: inputs.country, city: inputs.city };
    // Allocation is charged: the key makes a repeat after a crash a replay, not a second term.
    return createRecorded(
      keyedFor(inputs, [inputs.product, inputs.country, inputs.city], label(inputs)),
      (request) => client.ips.allocate(body, request),
      (id) => reads.ipAllocation.read(id),
      (allocation) => toState(allocation, inputs, NEVER_REPLACED),
    );
  },

  async read(id, olds) {
    const allocation = await providerContext().reads.ipAllocation.read(id);
    return allocation ? { id, props: toState(allocation, olds, olds) } : {};
  },

  async update(id, olds, news) {
    const { client } = providerContext();
    if (!swapRequested(olds, news.replaceTrigger)) {
      return { outs: toState(await explained(label(olds), "read it", client.ips.get(id)), news, olds) };
    }
    // Absent means "no charged replacement": the API then refuses anything beyond the free ones.
    const ceiling = news.maxReplacementChargeCents ?? 0;
    try {
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
      return { outs: toState(current, news, last) };
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
  },

  async delete(id, olds) {
    const { client } = providerContext();
    await explained(
      label(olds),
      "release it",
      unlessGone(() => client.ips.release(id)),
    );
  },
});

export type IpAllocationArgs = d.ArgsOf<typeof ipAllocation>;
/** An allocated ISP or dedicated address. The resource id is the stable allocation id; `ip` may change. */
export const IpAllocation = d.resourceClass(ipAllocation, stubs, "IpAllocation");
export type IpAllocation = InstanceType<typeof IpAllocation>;
