import { formatDollars } from "../../contract/pricing";
import { visibleText } from "../../contract/visibleText";
import { isReadable } from "./collect";
import type { Report } from "./model";
import { day, formatBytes, formatCeiling } from "./words";

/** A table cell: a pipe or a line break (a carriage return is one too) would end it. */
const cell = (text: string | number): string =>
  String(text)
    .replace(/\|/g, "\\|")
    .replace(/\s*[\r\n]+\s*/g, " ");

/**
 * Text from the account or the stack (names, ids, messages), shown as written: hidden characters
 * spelled out, and every character Markdown or HTML would act on escaped (tags, links, images,
 * emphasis, code, autolinks of `https:`, `www.` or an address). An underscore inside a word (an id)
 * emphasises nothing and stays as it is; a pipe is the cell's to escape.
 */
const text = (value: string): string =>
  visibleText(value).replace(
    /[\\`*[\]()<>!~&@]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])|:(?=\/\/)|(?<=\bwww)\./giu,
    "\\$&",
  );

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
  if (!isReadable(report.users)) out.push(`Not shown: ${text(report.users.unreadable)}.`);
  else {
    out.push(
      report.atRisk.length === 0
        ? "No user reaches a ceiling this month at the pace of the last 7 days."
        : table(
            ["User", "Ceiling", "Date", ""],
            report.atRisk.map(({ name, crossing }) => [
              text(name),
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
            user.enabled ? text(user.name) : `${text(user.name)} (disabled)`,
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
  if (!isReadable(spend)) out.push(`Not shown: ${text(spend.unreadable)}.`);
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
  if (!isReadable(keys)) out.push(`Not shown: ${text(keys.unreadable)}.`);
  else
    out.push(
      table(
        ["Key", "Scopes", "Age", "Expires", "Rotation due", "Status"],
        keys.map((key) => [
          `${key.powerful ? "⚠ " : ""}${text(key.name)} (${text(key.id)})`,
          key.scopes
            .map((scope) => (/^(billing|keys):write$/.test(scope) ? `**${text(scope)}**` : text(scope)))
            .join(", "),
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
      `### Stack ${text(stack.name)}: ${stack.percent} % managed`,
      "",
      table(
        ["Kind", "Managed", "Unmanaged", "In state, gone"],
        stack.kinds.map((k) => [k.type, k.managed, k.unmanaged, k.goneFromAccount]),
      ),
      "",
    );
    if (!isReadable(stack.drift)) out.push(`Drift not shown: ${text(stack.drift.unreadable)}.`);
    else if (stack.drift.length === 0) out.push("No drift.");
    else
      out.push(
        table(
          ["Drifted resource", "What changed"],
          stack.drift.map((r) => [
            text(r.name),
            r.kind === "deleted" ? "deleted" : r.properties.map((p) => text(p.path)).join(", "),
          ]),
        ),
      );
  }
  return `${out.join("\n")}\n`;
}
