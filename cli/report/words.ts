import type { Crossing, UserTraffic } from "./traffic";

/** The words the HTML and the Markdown share, so both say the same thing. */

/** 10^9 bytes is a GB, as the ceilings count them. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${bytes} B`;
}

export const formatCeiling = (bytes: number | null): string => (bytes === null ? "none" : formatBytes(bytes));

export function describeCrossing(crossing: Crossing): string {
  return `${crossing.ceiling} ceiling ${crossing.reached ? "reached" : "projected"} ${crossing.date}`;
}

export function userSummary(user: UserTraffic): string {
  return `${formatBytes(user.monthBytes)} this month, ${formatBytes(user.paceBytesPerDay)}/day pace, ${formatBytes(user.projectedMonthBytes)} projected`;
}

/** `2030-01-31T12:00:00.000Z` reads as `2030-01-31`. */
export const day = (timestamp: string | null): string => (timestamp === null ? "never" : timestamp.slice(0, 10));
