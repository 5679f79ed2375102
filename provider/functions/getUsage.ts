import { z } from "zod";
import { CalendarDate, ProxyUserId } from "../../contract";
import { camelized } from "../program/camelized";
import { describeFunction } from "./descriptor";
import { Granularity } from "./records";

const Row = z.object({
  proxyUserId: z.string().describe("The proxy user (pu_…)."),
  periodStart: z.string().describe("The day, or the first day of the month, `YYYY-MM-DD` (UTC)."),
  bytes: z.number().int().describe("Bytes carried through the gateways, both directions."),
  requests: z.number().int().describe("Requests carried through the gateways."),
});

const Totals = z.object({
  bytes: z.number().int().describe("Bytes over every row."),
  requests: z.number().int().describe("Requests over every row."),
});

export const getUsage = describeFunction({
  name: "getUsage",
  description: "Traffic through the gateways for a period, per day or per month, optionally of one proxy user.",
  action: "read usage",
  inputs: {
    from: CalendarDate.describe("First day, `YYYY-MM-DD` (UTC), inclusive."),
    to: CalendarDate.describe("Last day, `YYYY-MM-DD` (UTC), inclusive; at most 366 days after `from`."),
    proxyUserId: ProxyUserId.optional().describe(
      "Only this proxy user (pu_…); default every proxy user of the account.",
    ),
    granularity: Granularity.optional(),
  },
  outputs: {
    rows: z
      .array(Row)
      .describe("Only (proxy user, period) pairs that carried traffic, by period, then by proxy user id."),
    totals: Totals.describe("The sums over the rows."),
  },
  operations: ["getUsage"],
  example: { from: "2026-11-01", to: "2026-11-30", granularity: "day" },
  async call(client, { from, to, proxyUserId, granularity }) {
    const report = await client.usage.get({
      from,
      to,
      ...(proxyUserId !== undefined ? { proxy_user_id: proxyUserId } : {}),
      ...(granularity !== undefined ? { granularity } : {}),
    });
    return { rows: camelized(report.usage), totals: { ...report.totals } };
  },
});
