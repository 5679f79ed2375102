import { z } from "zod";
import { IpHealth, IpProduct, SCOPES } from "../../contract";

/**
 * The objects the functions return, as a program reads them (camelCase), each field documented: the
 * schema carries the text into every generated SDK. Closed sets are zod enums, so the schema lists
 * their values.
 */

export const Product = IpProduct.describe("The IP product: `isp` or `dedicated`.");
export const Health = IpHealth.describe("The address's reputation as the service monitors it: good, degraded or bad.");
export const Scope = z.enum(SCOPES).describe("A permission an API key holds.");
export const Granularity = z.enum(["day", "month"]).describe("One row per day or per calendar month (UTC).");

export const ProxyUserRecord = z.object({
  id: z.string().describe("The proxy user's id (pu_…): what `adoptId` takes."),
  name: z.string().describe("The name the user was created with."),
  username: z.string().describe("The gateway login."),
  limits: z
    .object({
      dailyGb: z.number().nullable().describe("Daily ceiling in GB; null means no ceiling."),
      monthlyGb: z.number().nullable().describe("Monthly ceiling in GB; null means no ceiling."),
    })
    .describe("Traffic ceilings."),
  enabled: z.boolean().describe("Whether the user may use the gateways."),
  createdAt: z.string().describe("When the user was created (ISO 8601, UTC)."),
  updatedAt: z.string().describe("When the user last changed (ISO 8601, UTC)."),
});

export const IpAllocationRecord = z.object({
  id: z.string().describe("The allocation's id (alloc_…), which stays through replacements: what `adoptId` takes."),
  ip: z.string().describe("The current IPv4 address."),
  product: Product,
  country: z.string().describe("Two-letter country code, lowercase."),
  city: z.string().describe("City, lowercase."),
  asn: z.string().describe("The autonomous system announcing the address."),
  allocatedAt: z.string().describe("When the address was allocated (ISO 8601, UTC)."),
  renewsAt: z.string().describe("When the allocation next renews and is charged (ISO 8601, UTC)."),
  health: Health,
  blacklists: z.number().int().describe("How many blacklists list the address."),
  replacementsThisMonth: z.number().int().describe("Replacements made this calendar month."),
  freeReplacementsRemaining: z.number().int().describe("Replacements left this month at no charge."),
});
