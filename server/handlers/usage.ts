import type { UsageQuery, UsageReport } from "../../contract/usage";
import { DAY_MS } from "../clock";
import { invalidRequest } from "../errors";
import type { HandlerTable } from "./context";

/** Bounds the work one request can ask for. */
export const USAGE_RANGE_MAX_DAYS = 366;

export const usageHandlers: HandlerTable<"getUsage"> = {
  /** Sparse: only (proxy user, period) pairs with traffic appear. A month row starts on the 1st even when `from` does not. */
  getUsage(ctx) {
    const query = ctx.query as UsageQuery;
    const spanDays = (Date.parse(query.to) - Date.parse(query.from)) / DAY_MS + 1;
    if (spanDays < 1) throw invalidRequest([{ path: "to", message: "must not be before from" }]);
    if (spanDays > USAGE_RANGE_MAX_DAYS)
      throw invalidRequest([{ path: "to", message: `must be at most ${USAGE_RANGE_MAX_DAYS} days after from` }]);
    const byMonth = query.granularity === "month";
    const rows = new Map<string, UsageReport["usage"][number]>();
    const totals = { bytes: 0, requests: 0 };
    for (const bucket of ctx.store.traffic.values()) {
      if (bucket.day < query.from || bucket.day > query.to) continue;
      if (query.proxy_user_id !== undefined && bucket.proxyUserId !== query.proxy_user_id) continue;
      const periodStart = byMonth ? `${bucket.day.slice(0, 7)}-01` : bucket.day;
      const rowKey = `${periodStart} ${bucket.proxyUserId}`;
      const row = rows.get(rowKey) ?? {
        proxy_user_id: bucket.proxyUserId,
        period_start: periodStart,
        bytes: 0,
        requests: 0,
      };
      row.bytes += bucket.bytes;
      row.requests += bucket.requests;
      rows.set(rowKey, row);
      totals.bytes += bucket.bytes;
      totals.requests += bucket.requests;
    }
    const usage = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    return { usage, totals } satisfies UsageReport;
  },
};
