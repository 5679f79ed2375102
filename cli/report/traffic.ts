import { DAY_MS } from "../../contract/pricing";
import { BYTES_PER_GB, type ProxyUser } from "../../contract/proxyUsers";
import type { UsageReport } from "../../contract/usage";

/** How many full days before the report's day set a user's pace. */
export const PACE_DAYS = 7;

/** A ceiling a user has reached, or will reach at the pace of the last `PACE_DAYS` days. */
export interface Crossing {
  ceiling: "daily" | "monthly";
  /** The UTC day it was or will be reached. */
  date: string;
  /** Already reached (the gateway refuses the user), rather than projected. */
  reached: boolean;
}

export interface UserTraffic {
  id: string;
  name: string;
  enabled: boolean;
  dailyCeilingBytes: number | null;
  monthlyCeilingBytes: number | null;
  /** Bytes of each day of the month, from the 1st through the report's day. */
  days: number[];
  monthBytes: number;
  /** Bytes a day at the pace of the last full days (0 for a disabled user: the gateway refuses it). */
  paceBytesPerDay: number;
  projectedMonthBytes: number;
  crossings: Crossing[];
}

/** The month the report covers, as UTC calendar days. */
export interface ReportMonth {
  /** `YYYY-MM` */
  month: string;
  /** Day of the month the report is made on, 1-based. */
  today: number;
  daysInMonth: number;
}

export function monthOf(asOf: string): ReportMonth {
  const [year, month, day] = asOf.split("-").map(Number) as [number, number, number];
  return {
    month: asOf.slice(0, 7),
    today: day,
    daysInMonth: new Date(Date.UTC(year, month, 0)).getUTCDate(),
  };
}

/** `YYYY-MM-DD` shifted by whole days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(date) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The one `/v1/usage` read the report needs: the month so far and the pace window before it, for
 * every user at once (no `proxy_user_id`), by day.
 */
export function usageRange(asOf: string): { from: string; to: string } {
  const monthStart = `${asOf.slice(0, 7)}-01`;
  const paceStart = addDays(asOf, -PACE_DAYS);
  return { from: paceStart < monthStart ? paceStart : monthStart, to: asOf };
}

const gbToBytes = (gb: number | null): number | null => (gb === null ? null : Math.round(gb * BYTES_PER_GB));

/**
 * One user's month: the days so far, the pace, the month end it leads to and the ceilings it
 * crosses. Today is partial, so it counts as at least a day at the pace.
 */
function userTraffic(user: ProxyUser, byDay: Map<string, number>, asOf: string, month: ReportMonth): UserTraffic {
  const days = Array.from({ length: month.today }, (_, index) => {
    const day = `${month.month}-${String(index + 1).padStart(2, "0")}`;
    return byDay.get(day) ?? 0;
  });
  const monthBytes = days.reduce((sum, bytes) => sum + bytes, 0);
  const todayBytes = days[month.today - 1] ?? 0;
  const beforeToday = monthBytes - todayBytes;

  // The full days before today since the user existed, at most PACE_DAYS of them.
  const createdDay = user.created_at.slice(0, 10);
  let paceDays = 0;
  let paceBytes = 0;
  for (let back = 1; back <= PACE_DAYS; back++) {
    const day = addDays(asOf, -back);
    if (day < createdDay) break;
    paceDays++;
    paceBytes += byDay.get(day) ?? 0;
  }
  const pace = !user.enabled ? 0 : paceDays === 0 ? todayBytes : paceBytes / paceDays;
  const endOfToday = beforeToday + Math.max(todayBytes, pace);
  const remainingDays = month.daysInMonth - month.today;
  const projectedMonthBytes = Math.round(user.enabled ? endOfToday + pace * remainingDays : monthBytes);

  const daily = gbToBytes(user.limits.daily_gb);
  const monthly = gbToBytes(user.limits.monthly_gb);
  const dayName = (dayOfMonth: number) => `${month.month}-${String(dayOfMonth).padStart(2, "0")}`;
  const crossings: Crossing[] = [];
  if (monthly !== null) {
    let cumulative = 0;
    const reachedOn = days.findIndex((bytes) => {
      cumulative += bytes;
      return cumulative >= monthly;
    });
    if (reachedOn >= 0) crossings.push({ ceiling: "monthly", date: dayName(reachedOn + 1), reached: true });
    else if (user.enabled && endOfToday >= monthly) crossings.push({ ceiling: "monthly", date: asOf, reached: false });
    else if (user.enabled && pace > 0) {
      const extraDays = Math.ceil((monthly - endOfToday) / pace);
      if (extraDays <= remainingDays)
        crossings.push({ ceiling: "monthly", date: dayName(month.today + extraDays), reached: false });
    }
  }
  if (daily !== null) {
    if (todayBytes >= daily) crossings.push({ ceiling: "daily", date: asOf, reached: true });
    else if (user.enabled && pace >= daily) crossings.push({ ceiling: "daily", date: asOf, reached: false });
  }
  crossings.sort((a, b) => a.date.localeCompare(b.date));
  return {
    id: user.id,
    name: user.name,
    enabled: user.enabled,
    dailyCeilingBytes: daily,
    monthlyCeilingBytes: monthly,
    days,
    monthBytes,
    paceBytesPerDay: Math.round(pace),
    projectedMonthBytes,
    crossings,
  };
}

/**
 * Every user's month from one usage read, those that reach or will reach a ceiling first (soonest
 * first), then the rest by traffic.
 */
export function trafficByUser(users: readonly ProxyUser[], usage: UsageReport, asOf: string): UserTraffic[] {
  const month = monthOf(asOf);
  const rowsByUser = new Map<string, Map<string, number>>();
  for (const row of usage.usage) {
    const byDay = rowsByUser.get(row.proxy_user_id) ?? new Map<string, number>();
    byDay.set(row.period_start, (byDay.get(row.period_start) ?? 0) + row.bytes);
    rowsByUser.set(row.proxy_user_id, byDay);
  }
  const traffic = users.map((user) => userTraffic(user, rowsByUser.get(user.id) ?? new Map(), asOf, month));
  const firstCrossing = (user: UserTraffic) => user.crossings[0]?.date ?? "9999-12-31";
  return traffic.sort(
    (a, b) =>
      firstCrossing(a).localeCompare(firstCrossing(b)) || b.monthBytes - a.monthBytes || a.name.localeCompare(b.name),
  );
}
