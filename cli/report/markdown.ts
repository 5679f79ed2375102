import { formatDollars } from "../../contract/pricing";
import { isReadable } from "./collect";
import type { Report } from "./model";
import { day, formatBytes, formatCeiling } from "./words";

/** A table cell: a pipe or a line break would end it. */
const cell = (text: string | number): string =>
  String(text)
    .replace(/\|/g, "\\|")
    .replace(/\s*\n\s*/g, " ");

function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.map(cell).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** How many users the Markdown lists in full; a PR comment with a thousand rows helps nobody. */
export const MARKDOWN_USER_ROWS = 50;

/** For a pull request or an issue: tables only, no script, no picture. */
export function renderMarkdown(report: Report): string {
  const out: string[] = [
    `## Proxy account report, ${report.month.month} (day ${report.month.today} of ${report.month.daysInMonth})`,
    "",
    `${report.apiUrl} as of ${report.asOf}, in ${report.requests.total} requests. GB are 10^9 bytes.`,
    "",
    "### Reaching a ceiling this month",
    "",
  ];
  if (!isReadable(report.users)) out.push(`Not shown: ${report.users.unreadable}.`);
  else {
    out.push(
      report.atRisk.length === 0
        ? "No user reaches a ceiling this month at the pace of the last 7 days."
        : table(
            ["User", "Ceiling", "Date", ""],
            report.atRisk.map(({ name, crossing }) => [
              name,
              crossing.ceiling,
              crossing.date,
              crossing.reached ? "**reached**" : "projected",
            ]),
          ),
      "",
      `### Proxy users (${report.users.length}${report.users.length > MARKDOWN_USER_ROWS ? `, the first ${MARKDOWN_USER_ROWS}` : ""})`,
      "",
      table(
        ["User", "This month", "Pace / day", "Projected", "Daily ceiling", "Monthly ceiling"],
        report.users
          .slice(0, MARKDOWN_USER_ROWS)
          .map((user) => [
            user.enabled ? user.name : `${user.name} (disabled)`,
            formatBytes(user.monthBytes),
            formatBytes(user.paceBytesPerDay),
            formatBytes(user.projectedMonthBytes),
            formatCeiling(user.dailyCeilingBytes),
            formatCeiling(user.monthlyCeilingBytes),
          ]),
      ),
    );
  }
  out.push("", "### Spend", "");
  const { spend } = report;
  if (!isReadable(spend)) out.push(`Not shown: ${spend.unreadable}.`);
  else {
    const balance = spend.balanceCents === null ? "not readable" : formatDollars(spend.balanceCents);
    out.push(`Balance ${balance}; charged this month ${formatDollars(spend.totalCents)}.`);
    if (spend.byKind.length > 0)
      out.push(
        "",
        table(
          ["Kind", "Charges", "Amount"],
          spend.byKind.map((k) => [k.kind, k.count, formatDollars(k.cents)]),
        ),
      );
  }
  out.push("", "### API keys", "");
  const { keys } = report;
  if (!isReadable(keys)) out.push(`Not shown: ${keys.unreadable}.`);
  else
    out.push(
      table(
        ["Key", "Scopes", "Age", "Expires", "Rotation due", "Status"],
        keys.map((key) => [
          `${key.powerful ? "⚠ " : ""}${key.name} (${key.id})`,
          key.scopes.map((scope) => (/^(billing|keys):write$/.test(scope) ? `**${scope}**` : scope)).join(", "),
          `${key.ageDays} d`,
          day(key.expiresAt),
          `${day(key.rotationDueAt)} (${key.rotationSchedule})`,
          key.status,
        ]),
      ),
    );
  const { stack } = report;
  if (stack) {
    out.push(
      "",
      `### Stack ${stack.name}: ${stack.percent} % managed`,
      "",
      table(
        ["Kind", "Managed", "Unmanaged", "In state, gone"],
        stack.kinds.map((k) => [k.type, k.managed, k.unmanaged, k.goneFromAccount]),
      ),
      "",
    );
    if (!isReadable(stack.drift)) out.push(`Drift not shown: ${stack.drift.unreadable}.`);
    else if (stack.drift.length === 0) out.push("No drift.");
    else
      out.push(
        table(
          ["Drifted resource", "What changed"],
          stack.drift.map((r) => [
            r.name,
            r.kind === "deleted" ? "deleted" : r.properties.map((p) => p.path).join(", "),
          ]),
        ),
      );
  }
  return `${out.join("\n")}\n`;
}
