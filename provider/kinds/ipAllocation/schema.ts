import { z } from "zod";
import { CityName, CountryCode, IpHealth, IpPathSegment, IpProduct, ReplaceIpBody, Timestamp } from "../../../contract";
import type { ProxyClient, IpAllocation as WireAllocation } from "../../../sdk";
import { walkable } from "../../core/coalescer";
import * as d from "../../core/descriptor";
import { swapRequested } from "./retire";

/** The model of an allocated address: its inputs and outputs, one zod field each. */

/**
 * A declared city is held against the one declared before, not against where the address is now: a
 * swap (in or out of Pulumi) that moved it elsewhere is drift to report, not a reason to buy a new
 * term. Declaring the city the address is already in only records it. Without a city, any city of
 * the country satisfies the inputs, so the address the API chose stays.
 */
function cityEffect(olds: Record<string, unknown>, news: Record<string, unknown>): d.Effect {
  const declared = olds.requestedCity ?? olds.city;
  if (news.city === undefined || news.city === declared) return "none";
  return news.city === olds.city ? "update" : "replace";
}

const lowercase = (text: string) => text.trim().toLowerCase();

/** The model's fields carry their documentation (`describe`), which the native schema reads. */
export const inputs = {
  product: d.replaceOnChange(IpProduct.describe('"isp" or "dedicated". Changing it replaces the allocation.')),
  country: d.replaceOnChange(
    z
      .string()
      .transform(lowercase)
      .pipe(CountryCode)
      .describe('Two-letter country code, e.g. "de". Changing it replaces the allocation.'),
  ),
  city: d.changeDecidedBy(
    z
      .string()
      .transform(lowercase)
      .pipe(CityName)
      .optional()
      .describe(
        "Lowercase city name; any city of the country when absent. Moving to another city replaces the allocation.",
      ),
    cityEffect,
  ),
  replaceTrigger: d.changeDecidedBy(
    d.Trigger.optional().describe(
      "A change of this value swaps the address in place (same allocation id), using the settings below. An IP " +
        "address names the address to retire: it swaps only while the allocation holds it.",
    ),
    (olds, news) => (swapRequested(olds, news.replaceTrigger as string | undefined) ? "update" : "none"),
  ),
  replaceReason: ReplaceIpBody.shape.reason
    .default("other")
    .describe(
      'Why the address is replaced: blacklisted, unreachable, slow, other or any text up to 200 characters. Default "other".',
    ),
  keepCity: z.boolean().default(false).describe("Keep the replacement in the same city."),
  maxReplacementChargeCents: ReplaceIpBody.shape.max_charge_cents.describe(
    "The most a replacement may cost, in cents. Two replacements per allocation and month are free; later " +
      "ones are refused unless this ceiling covers their prorated price.",
  ),
  adoptId: d.createOnly(
    IpPathSegment.optional().describe(
      "Take over the existing allocation with this id (alloc_…) or address instead of allocating one.",
    ),
  ),
};

export const outputs = {
  allocationId: z.string().describe("The allocation's id (alloc_…); it stays when the address is swapped."),
  ip: z.string().describe("The address the allocation holds now."),
  product: IpProduct,
  country: z.string(),
  city: z.string().describe("The city the address is in, as the API reports it."),
  requestedCity: z
    .string()
    .nullable()
    .optional()
    .describe("The city the program asks for; null when any city of the country will do (absent in older state)."),
  asn: z.string().describe("The autonomous system announcing the address."),
  health: IpHealth.describe("The address's reputation as the service monitors it: good, degraded or bad."),
  blacklists: z.number().describe("How many blacklists list the address."),
  allocatedAt: Timestamp.describe("When the address was allocated (ISO 8601, UTC)."),
  renewsAt: Timestamp.describe("When the allocation next renews and is charged (ISO 8601, UTC)."),
  replacementsThisMonth: z.number().describe("Replacements made this calendar month."),
  freeReplacementsRemaining: z.number().describe("Replacements left this month at no charge."),
  lastReplacedIp: z
    .string()
    .nullable()
    .describe("The address the last replacement by this stack retired; null before the first."),
  lastReplacementChargeCents: z
    .number()
    .nullable()
    .describe("What the last replacement by this stack cost; null before the first."),
};

export type Shape = d.Descriptor<typeof inputs, typeof outputs, WireAllocation>;
export type Inputs = d.InputsOf<Shape>;
export type State = d.StateOf<Shape>;
export type Stored = d.StoredOf<Shape>;

/**
 * `IpAllocation "edge" (de/Berlin)`: the declared name where the bag carries it (an address has no
 * name of its own at the API), then the address, or where it was asked for before it has one.
 */
export const label = (props: Record<string, unknown>) => {
  const where =
    typeof props.ip === "string"
      ? props.ip
      : [props.country, props.city].filter((part) => typeof part === "string").join("/");
  const name = d.declaredName(props);
  return name === undefined ? `IpAllocation ${where}` : `IpAllocation "${name}" (${where})`;
};

/** The list a refresh walks. */
export const reads = { kind: "ipAllocation", collection: (client: ProxyClient) => walkable(client.ips) } as const;
