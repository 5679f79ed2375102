import * as pulumi from "@pulumi/pulumi";
import { ConflictError, ErrorCode, type IpAllocation as WireAllocation } from "../sdk";
import { CityName, CountryCode, IpPathSegment, IpProduct, ReplaceIpBody } from "../sdk/schemas";
import { apiClient } from "./config";
import { readBack, readsFor } from "./reads";
import { CheckFailures, diffResult, explain, explained, isUnknown, PartialFailure, unlessGone } from "./shared";
import stubs from "./stubs/ipAllocation";

export interface IpAllocationArgs {
  /** "isp" or "dedicated". Changing it replaces the allocation. */
  product: pulumi.Input<"isp" | "dedicated">;
  /** Two-letter country code, e.g. "de". Changing it replaces the allocation. */
  country: pulumi.Input<string>;
  /** Lowercase city name; any city of the country when absent. Changing it replaces the allocation. */
  city?: pulumi.Input<string>;
  /** Any change of this value swaps the address in place (same allocation id), using the settings below. */
  replaceTrigger?: pulumi.Input<string>;
  /** Why the address is replaced: blacklisted, unreachable, slow, other or any text up to 200 characters. Default "other". */
  replaceReason?: pulumi.Input<string>;
  /** Keep the replacement in the same city. */
  keepCity?: pulumi.Input<boolean>;
  /**
   * The most a replacement may cost, in cents. Two replacements per allocation and month are free;
   * later ones are refused unless this ceiling covers their prorated price.
   */
  maxReplacementChargeCents?: pulumi.Input<number>;
  /** Take over the existing allocation with this id (alloc_…) or address instead of allocating one. */
  adoptId?: pulumi.Input<string>;
}

interface Inputs {
  product: "isp" | "dedicated";
  country: string;
  city?: string;
  replaceTrigger?: string;
  replaceReason: string;
  keepCity: boolean;
  maxReplacementChargeCents?: number;
  adoptId?: string;
}

interface State extends Inputs {
  allocationId: string;
  ip: string;
  asn: string;
  health: string;
  blacklists: number;
  allocatedAt: string;
  renewsAt: string;
  replacementsThisMonth: number;
  freeReplacementsRemaining: number;
  lastReplacedIp?: string;
  lastReplacementChargeCents?: number;
}

const label = (state: { ip?: string; country?: unknown; city?: unknown }) =>
  `IpAllocation ${state.ip ?? [state.country, state.city].filter((part) => typeof part === "string").join("/")}`;

function toState(allocation: WireAllocation, inputs: Inputs, carried: Partial<State>): State {
  return {
    ...inputs,
    ...(carried.lastReplacedIp !== undefined ? { lastReplacedIp: carried.lastReplacedIp } : {}),
    ...(carried.lastReplacementChargeCents !== undefined
      ? { lastReplacementChargeCents: carried.lastReplacementChargeCents }
      : {}),
    allocationId: allocation.id,
    ip: allocation.ip,
    asn: allocation.asn,
    health: allocation.health,
    blacklists: allocation.blacklists,
    allocatedAt: allocation.allocated_at,
    renewsAt: allocation.renews_at,
    replacementsThisMonth: allocation.replacements_this_month,
    freeReplacementsRemaining: allocation.free_replacements_remaining,
  };
}

/** The inputs of state written by any version, with today's defaults filled in. */
function inputsOf(state: Partial<State>): Inputs {
  return { ...(state as State), replaceReason: state.replaceReason ?? "other", keepCity: state.keepCity === true };
}

export const ipAllocationHandler = {
  async check(_olds: unknown, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult<Inputs>> {
    const failures = new CheckFailures();
    const lower = (value: unknown) => (typeof value === "string" ? value.trim().toLowerCase() : value);
    failures.validate("product", IpProduct, news.product);
    const country = lower(news.country);
    failures.validate("country", CountryCode, country);
    const city = lower(news.city);
    if (city !== undefined) failures.validate("city", CityName, city);
    const replaceReason = news.replaceReason ?? "other";
    failures.validate("replaceReason", ReplaceIpBody.shape.reason, replaceReason);
    if (news.keepCity !== undefined && !isUnknown(news.keepCity) && typeof news.keepCity !== "boolean") {
      failures.add("keepCity", "keepCity must be true or false");
    }
    if (news.maxReplacementChargeCents !== undefined) {
      failures.validate(
        "maxReplacementChargeCents",
        ReplaceIpBody.shape.max_charge_cents,
        news.maxReplacementChargeCents,
      );
    }
    if (news.adoptId !== undefined) failures.validate("adoptId", IpPathSegment, news.adoptId);
    return failures.result({
      product: news.product as Inputs["product"],
      country: country as string,
      ...(city !== undefined ? { city: city as string } : {}),
      ...(news.replaceTrigger !== undefined ? { replaceTrigger: news.replaceTrigger as string } : {}),
      replaceReason: replaceReason as string,
      keepCity: news.keepCity === true,
      ...(news.maxReplacementChargeCents !== undefined
        ? { maxReplacementChargeCents: news.maxReplacementChargeCents as number }
        : {}),
      ...(news.adoptId !== undefined ? { adoptId: news.adoptId as string } : {}),
    });
  },

  async diff(_id: string, oldState: Partial<State>, news: Inputs): Promise<pulumi.dynamic.DiffResult> {
    const olds = inputsOf(oldState);
    const replaces: string[] = (["product", "country"] as const).filter((key) => olds[key] !== news[key]);
    // Without a city, any city of the country satisfies the inputs, so the address the API chose stays.
    if (news.city !== undefined && news.city !== olds.city) replaces.push("city");
    const updates = (["replaceTrigger", "replaceReason", "keepCity", "maxReplacementChargeCents"] as const).filter(
      (key) => olds[key] !== news[key],
    );
    return diffResult(updates, replaces);
  },

  async create(inputs: Inputs): Promise<pulumi.dynamic.CreateResult<State>> {
    const client = apiClient();
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
      return { id: existing.id, outs: toState(existing, { ...inputs, city: inputs.city ?? existing.city }, {}) };
    }
    const allocated = await explained(
      label(inputs),
      "allocate it",
      client.ips.allocate({
        product: inputs.product,
        country: inputs.country,
        ...(inputs.city ? { city: inputs.city } : {}),
      }),
    );
    const fromCreate = toState(allocated, inputs, {});
    try {
      return {
        id: allocated.id,
        outs: toState(await readBack(readsFor(client).ipAllocation, allocated.id), inputs, {}),
      };
    } catch (error) {
      throw new PartialFailure(
        explain(label(allocated), "read it back after allocating it", error).message,
        allocated.id,
        { ...fromCreate },
      );
    }
  },

  async read(id: string, olds: Partial<State>): Promise<pulumi.dynamic.ReadResult<State>> {
    const allocation = await readsFor(apiClient()).ipAllocation.read(id);
    return allocation ? { id, props: toState(allocation, inputsOf(olds), olds) } : {};
  },

  async update(id: string, oldState: Partial<State>, news: Inputs): Promise<pulumi.dynamic.UpdateResult<State>> {
    const client = apiClient();
    if (oldState.replaceTrigger === news.replaceTrigger) {
      const current = await explained(label(oldState), "read it", client.ips.get(id));
      return { outs: toState(current, news, oldState) };
    }
    try {
      const result = await client.ips.replace(id, {
        reason: news.replaceReason,
        keep_city: news.keepCity,
        // Absent means "no charged replacement": the API then refuses anything beyond the free ones.
        max_charge_cents: news.maxReplacementChargeCents ?? 0,
      });
      return {
        outs: toState(result.allocation, news, {
          lastReplacedIp: result.replaced_ip,
          lastReplacementChargeCents: result.charge?.amount_cents ?? 0,
        }),
      };
    } catch (error) {
      if (error instanceof ConflictError && error.code === ErrorCode.enum.charge_exceeds_limit) {
        const cost = error.details?.charge_cents;
        throw new Error(
          `${label(oldState)}: replacing it would cost ${cost} cents, above maxReplacementChargeCents (${news.maxReplacementChargeCents ?? "unset, so 0"}). ` +
            `This month's free replacements are used; raise maxReplacementChargeCents to at least ${cost} to allow a charged replacement.`,
          { cause: error },
        );
      }
      throw explain(label(oldState), "replace its address", error);
    }
  },

  async delete(id: string, props: Partial<State>): Promise<void> {
    await explained(
      label(props),
      "release it",
      unlessGone(() => apiClient().ips.release(id)),
    );
  },
};

/** An allocated ISP or dedicated address. The resource id is the stable allocation id; `ip` may change. */
export class IpAllocation extends pulumi.dynamic.Resource {
  declare readonly allocationId: pulumi.Output<string>;
  declare readonly ip: pulumi.Output<string>;
  declare readonly product: pulumi.Output<"isp" | "dedicated">;
  declare readonly country: pulumi.Output<string>;
  declare readonly city: pulumi.Output<string>;
  declare readonly asn: pulumi.Output<string>;
  declare readonly health: pulumi.Output<"good" | "degraded" | "bad">;
  declare readonly blacklists: pulumi.Output<number>;
  declare readonly allocatedAt: pulumi.Output<string>;
  declare readonly renewsAt: pulumi.Output<string>;
  declare readonly replacementsThisMonth: pulumi.Output<number>;
  declare readonly freeReplacementsRemaining: pulumi.Output<number>;
  declare readonly lastReplacedIp: pulumi.Output<string | undefined>;
  declare readonly lastReplacementChargeCents: pulumi.Output<number | undefined>;

  constructor(name: string, args: IpAllocationArgs, opts?: pulumi.CustomResourceOptions) {
    const outputs = {
      allocationId: undefined,
      ip: undefined,
      asn: undefined,
      health: undefined,
      blacklists: undefined,
      allocatedAt: undefined,
      renewsAt: undefined,
      replacementsThisMonth: undefined,
      freeReplacementsRemaining: undefined,
      lastReplacedIp: undefined,
      lastReplacementChargeCents: undefined,
    };
    super(stubs, name, { ...outputs, city: undefined, ...args }, opts, "proxy", "IpAllocation");
  }
}
