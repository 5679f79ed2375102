import * as pulumi from "@pulumi/pulumi";
import { getBalance, getCharges, getUsage, lookupProxyUser, type UsageRow } from "pulumi-proxy";

const config = new pulumi.Config();
// The month to report, `YYYY-MM` (UTC); the current month by default.
const month = config.get("month") ?? new Date().toISOString().slice(0, 7);
// Optional: report one proxy user, by name, instead of the whole account.
const proxyUserName = config.get("proxyUser");

const [year, monthNumber] = month.split("-").map(Number);
if (!year || !monthNumber || !/^\d{4}-\d{2}$/.test(month)) throw new Error(`month must be YYYY-MM, got ${month}`);
const from = `${month}-01`;
const lastDay = new Date(Date.UTC(year, monthNumber, 0)).getUTCDate();
const to = `${month}-${String(lastDay).padStart(2, "0")}`;

const user = proxyUserName ? lookupProxyUser({ name: proxyUserName }) : undefined;
const usage = getUsage({ from, to, ...(user ? { proxyUserId: user.id } : {}) });

function perProxyUser(rows: UsageRow[]): Record<string, { bytes: number; requests: number }> {
  const totals: Record<string, { bytes: number; requests: number }> = {};
  for (const row of rows) {
    const entry = totals[row.proxyUserId] ?? { bytes: 0, requests: 0 };
    entry.bytes += row.bytes;
    entry.requests += row.requests;
    totals[row.proxyUserId] = entry;
  }
  return totals;
}

export const period = { month, from, to };
export const scope = user ? user.name : "all proxy users";
export const totals = usage.totals;
export const gigabytes = usage.totals.apply((sum) => Number((sum.bytes / 1e9).toFixed(6)));
export const byProxyUser = usage.rows.apply(perProxyUser);
export const busiestDay = usage.rows.apply((rows) => {
  const byDay = new Map<string, number>();
  for (const row of rows) byDay.set(row.periodStart, (byDay.get(row.periodStart) ?? 0) + row.bytes);
  const [day, bytes] = [...byDay].sort((a, b) => b[1] - a[1])[0] ?? [];
  return day === undefined ? null : { day, bytes };
});
export const balance = getBalance();
export const charges = getCharges({ since: from }).apply(({ charges: all }) => {
  const inMonth = all.filter((charge) => charge.createdAt.slice(0, 10) <= to);
  const byKind: Record<string, number> = {};
  for (const charge of inMonth) byKind[charge.kind] = (byKind[charge.kind] ?? 0) + charge.amountCents;
  return { count: inMonth.length, totalCents: inMonth.reduce((sum, charge) => sum + charge.amountCents, 0), byKind };
});
