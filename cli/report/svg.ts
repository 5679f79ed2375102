import { visibleText } from "../../contract/visibleText";
import type { ReportMonth, UserTraffic } from "./traffic";

/**
 * Charts drawn here, as SVG text: the report opens anywhere without a script or a network. Every
 * drawn series carries `data-series`, so a test counts series instead of comparing pixels. Paths use
 * whole-number coordinates and relative commands: a thousand users' charts stay well under 2 MB.
 */

const W = 240;
const H = 64;
const PAD = 2;

export const COLORS = {
  traffic: "#3b82f6",
  ceiling: "#dc2626",
  projection: "#f59e0b",
  managed: "#16a34a",
  unmanaged: "#9ca3af",
  drift: "#f97316",
} as const;

/** Text for HTML and SVG: hidden characters spelled out (a name cannot pass for another), markup escaped. */
export const escapeXml = (text: string): string =>
  visibleText(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const svg = (label: string, body: string, width = W, height = H): string =>
  `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(label)}">${body}</svg>`;

/** A horizontal line at `value`, when it is on the chart. */
function ceilingLine(series: string, value: number | null, y: (v: number) => number, x0: number, x1: number): string {
  if (value === null) return "";
  const at = y(value);
  return `<path data-series="${series}" d="M${x0} ${at}H${x1}" stroke="${COLORS.ceiling}" stroke-dasharray="4 2"/>`;
}

function scaleY(max: number): (value: number) => number {
  const span = max > 0 ? max : 1;
  return (value) => Math.round(H - PAD - (value / span) * (H - 2 * PAD));
}

/** Bars of each day's bytes this month, against the daily ceiling. */
export function dailyChart(user: UserTraffic, month: ReportMonth): string {
  const top = Math.max(...user.days, user.dailyCeilingBytes ?? 0) * 1.1;
  const y = scaleY(top);
  const step = W / month.daysInMonth;
  const bar = Math.max(1, Math.floor(step) - 1);
  const bars = user.days
    .map((bytes, index) => (bytes > 0 ? `M${Math.round(index * step)} ${H - PAD}V${y(bytes)}h${bar}V${H - PAD}z` : ""))
    .join("");
  return svg(
    `${user.name}: bytes per day`,
    `<path data-series="daily" d="${bars || `M0 ${H - PAD}h0`}" fill="${COLORS.traffic}"/>${ceilingLine("daily-ceiling", user.dailyCeilingBytes, y, 0, W)}`,
  );
}

/** The month's running total, its projection to month end at the recent pace, and the monthly ceiling. */
export function cumulativeChart(user: UserTraffic, month: ReportMonth): string {
  const top = Math.max(user.projectedMonthBytes, user.monthBytes, user.monthlyCeilingBytes ?? 0) * 1.1;
  const y = scaleY(top);
  const x = (day: number) => Math.round((day / month.daysInMonth) * W);
  let running = 0;
  const points = [`M0 ${H - PAD}`];
  user.days.forEach((bytes, index) => {
    running += bytes;
    points.push(`L${x(index + 1)} ${y(running)}`);
  });
  const projection =
    month.today < month.daysInMonth
      ? `<path data-series="projection" d="M${x(month.today)} ${y(user.monthBytes)}L${W} ${y(user.projectedMonthBytes)}" stroke="${COLORS.projection}" stroke-dasharray="3 3" fill="none"/>`
      : "";
  return svg(
    `${user.name}: bytes this month, cumulative`,
    `<path data-series="cumulative" d="${points.join("")}" stroke="${COLORS.traffic}" fill="none" stroke-width="2"/>${projection}${ceilingLine("monthly-ceiling", user.monthlyCeilingBytes, y, 0, W)}`,
  );
}

export interface Bar {
  label: string;
  /** Stacked segments, left to right. */
  segments: { series: string; value: number; color: string }[];
}

/** Labelled horizontal bars, each a stack of segments: spend by kind, coverage and drift by kind. */
export function barChart(label: string, bars: Bar[], format: (value: number) => string = String): string {
  const rowHeight = 22;
  const labelWidth = 130;
  const width = 480;
  const height = Math.max(1, bars.length) * rowHeight;
  const max = Math.max(1, ...bars.map((bar) => bar.segments.reduce((sum, segment) => sum + segment.value, 0)));
  const scale = (width - labelWidth - 70) / max;
  const rows = bars.map((bar, index) => {
    const top = index * rowHeight;
    let left = labelWidth;
    const segments = bar.segments
      .filter((segment) => segment.value > 0)
      .map((segment) => {
        const w = Math.max(1, Math.round(segment.value * scale));
        const rect = `<rect data-series="${segment.series}" x="${left}" y="${top + 3}" width="${w}" height="${rowHeight - 6}" fill="${segment.color}"><title>${escapeXml(`${bar.label}: ${format(segment.value)} ${segment.series}`)}</title></rect>`;
        left += w;
        return rect;
      })
      .join("");
    const total = format(bar.segments.reduce((sum, segment) => sum + segment.value, 0));
    return `<text x="0" y="${top + 15}" font-size="12">${escapeXml(bar.label)}</text>${segments}<text x="${left + 4}" y="${top + 15}" font-size="12">${escapeXml(total)}</text>`;
  });
  return svg(label, rows.join(""), width, height);
}
