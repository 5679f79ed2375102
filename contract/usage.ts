import { z } from "zod";
import { CalendarDate, ProxyUserId } from "./common";

export const UsageGranularity = z.enum(["day", "month"]);

export const UsageQuery = z.strictObject({
  from: CalendarDate,
  to: CalendarDate,
  proxy_user_id: ProxyUserId.optional(),
  granularity: UsageGranularity.optional(),
});
export type UsageQuery = z.infer<typeof UsageQuery>;

export const UsageRow = z.object({
  proxy_user_id: z.string(),
  period_start: CalendarDate,
  bytes: z.number().int().min(0),
  requests: z.number().int().min(0),
});

export const UsageReport = z.object({
  usage: z.array(UsageRow),
  totals: z.object({ bytes: z.number().int().min(0), requests: z.number().int().min(0) }),
});
export type UsageReport = z.infer<typeof UsageReport>;
