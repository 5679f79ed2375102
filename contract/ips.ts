import { z } from "zod";
import { AllocationId, ChargeId, Currency, ListQuery, listEnvelope, Timestamp } from "./common";

export const IpProduct = z.enum(["isp", "dedicated"]);
export type IpProduct = z.infer<typeof IpProduct>;

export const IpHealth = z.enum(["good", "degraded", "bad"]);
export type IpHealth = z.infer<typeof IpHealth>;

export const CountryCode = z.string().regex(/^[a-z]{2}$/, "must be a lowercase two-letter country code");
export const CityName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z]+(?:[ -][a-z]+)*$/, "must be a lowercase city name");
export const Ipv4 = z.ipv4();

/** An `{ip}` path segment: the current address or the stable allocation id. */
export const IpPathSegment = z.union([Ipv4, AllocationId], {
  error: "must be an IPv4 address or an allocation id (alloc_<token>)",
});

export const REPLACEMENT_REASON_MAX = 200;

export const IpAllocation = z.object({
  id: AllocationId,
  ip: Ipv4,
  product: IpProduct,
  country: z.string(),
  city: z.string(),
  asn: z.string(),
  allocated_at: Timestamp,
  renews_at: Timestamp,
  health: IpHealth,
  blacklists: z.number().int().min(0),
  replacements_this_month: z.number().int().min(0),
  free_replacements_remaining: z.number().int().min(0),
});
export type IpAllocation = z.infer<typeof IpAllocation>;

export const AllocateIpBody = z.strictObject({
  product: IpProduct,
  country: CountryCode,
  city: CityName.optional(),
});
export type AllocateIpBody = z.infer<typeof AllocateIpBody>;

export const ReplaceIpBody = z.strictObject({
  reason: z
    .string()
    .min(1, "must not be empty")
    .max(REPLACEMENT_REASON_MAX, `must be at most ${REPLACEMENT_REASON_MAX} characters`),
  keep_city: z.boolean().optional(),
  max_charge_cents: z.number().int().min(0, "must be at least 0").optional(),
});
export type ReplaceIpBody = z.infer<typeof ReplaceIpBody>;

export const ReplacementCharge = z.object({
  id: ChargeId,
  amount_cents: z.number().int().min(0),
  currency: Currency,
  prorated: z.boolean(),
});
export type ReplacementCharge = z.infer<typeof ReplacementCharge>;

export const ReplaceIpResult = z.object({
  allocation: IpAllocation,
  replaced_ip: Ipv4,
  charge: ReplacementCharge.nullable(),
});
export type ReplaceIpResult = z.infer<typeof ReplaceIpResult>;

export const IpListQuery = ListQuery.extend({
  product: IpProduct.optional(),
  country: CountryCode.optional(),
  city: CityName.optional(),
});
export type IpListQuery = z.infer<typeof IpListQuery>;

export const IpList = listEnvelope("ips", IpAllocation);
export type IpList = z.infer<typeof IpList>;
