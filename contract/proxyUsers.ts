import { z } from "zod";
import { ListQuery, listEnvelope, ProxyUserId, Timestamp } from "./common";

export const PROXY_USER_NAME_PATTERN = /^[a-z][a-z0-9-]{0,62}$/;
export const GIGABYTES_MAX = 100_000;

export const ProxyUserName = z
  .string()
  .regex(PROXY_USER_NAME_PATTERN, "must be 1-63 characters of a-z, 0-9 and '-', starting with a letter");

function hasAtMostThreeDecimals(value: number): boolean {
  const scaled = value * 1000;
  return Math.abs(scaled - Math.round(scaled)) < 1e-6;
}

/** A traffic ceiling in gigabytes; `null` means no ceiling. */
/** A ceiling of 1 GB is 10^9 bytes of traffic, counted by the gateway (contract section 7). */
export const BYTES_PER_GB = 1e9;

export const Gigabytes = z
  .number()
  .min(0, "must be at least 0")
  .max(GIGABYTES_MAX, `must be at most ${GIGABYTES_MAX}`)
  .refine(hasAtMostThreeDecimals, "must have at most 3 decimals")
  .nullable();

export function dailyWithinMonthly(limits: { daily_gb?: number | null; monthly_gb?: number | null }): boolean {
  const { daily_gb, monthly_gb } = limits;
  return daily_gb == null || monthly_gb == null || daily_gb <= monthly_gb;
}

const DAILY_ABOVE_MONTHLY = { message: "daily_gb must not exceed monthly_gb", path: ["daily_gb"] };

export const Limits = z.object({ daily_gb: Gigabytes, monthly_gb: Gigabytes });
export type Limits = z.infer<typeof Limits>;

/** Limits in a request: either ceiling may be left out (PATCH keeps the other one). */
export const LimitsInput = z
  .strictObject({ daily_gb: Gigabytes.optional(), monthly_gb: Gigabytes.optional() })
  .refine(dailyWithinMonthly, DAILY_ABOVE_MONTHLY);
export type LimitsInput = z.infer<typeof LimitsInput>;

export const ProxyUser = z.object({
  id: ProxyUserId,
  name: z.string(),
  username: z.string(),
  limits: Limits,
  enabled: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type ProxyUser = z.infer<typeof ProxyUser>;

/** The create answer is the only one that carries the gateway password. */
export const CreatedProxyUser = ProxyUser.extend({ password: z.string().min(1) });
export type CreatedProxyUser = z.infer<typeof CreatedProxyUser>;

export const CreateProxyUserBody = z.strictObject({
  name: ProxyUserName,
  limits: LimitsInput.optional(),
  enabled: z.boolean().optional(),
});
export type CreateProxyUserBody = z.infer<typeof CreateProxyUserBody>;

export const UpdateProxyUserBody = z.strictObject({
  limits: LimitsInput.optional(),
  enabled: z.boolean().optional(),
});
export type UpdateProxyUserBody = z.infer<typeof UpdateProxyUserBody>;

export const ProxyUserListQuery = ListQuery.extend({ enabled: z.enum(["true", "false"]).optional() });
export type ProxyUserListQuery = z.infer<typeof ProxyUserListQuery>;

export const ProxyUserList = listEnvelope("proxy_users", ProxyUser);
export type ProxyUserList = z.infer<typeof ProxyUserList>;
