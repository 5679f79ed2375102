import { formatDollars } from "../../contract/pricing";
import { isReadable } from "./collect";
import type { Report } from "./model";
import { barChart, COLORS, cumulativeChart, dailyChart, escapeXml as esc } from "./svg";
import { day, describeCrossing, formatBytes, formatCeiling, userSummary } from "./words";

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#111;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
.user{display:grid;grid-template-columns:280px 250px 250px;gap:8px;align-items:center;border-bottom:1px solid #eee;padding:4px 0}
.risk{color:#b91c1c;font-weight:600}.muted{color:#666}.powerful{background:#fef3c7}.warn{color:#b45309;font-weight:600}
.legend span{margin-right:14px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px}`;

const unreadable = (part: { unreadable: string }) => `<p class="muted">Not shown: ${esc(part.unreadable)}.</p>`;

function legend(items: [string, string][]): string {
  return `<p class="legend">${items.map(([color, text]) => `<span><i class="sw" style="background:${color}"></i>${esc(text)}</span>`).join("")}</p>`;
}

function usersSection(report: Report): string {
  if (!isReadable(report.users)) return `<h2>Proxy users</h2>${unreadable(report.users)}`;
  const risk =
    report.atRisk.length === 0
      ? "<p>No user reaches a ceiling this month at the pace of the last 7 days.</p>"
      : `<table id="at-risk"><tr><th>User</th><th>Ceiling</th><th>Date</th><th></th></tr>${report.atRisk
          .map(
            ({ name, crossing }) =>
              `<tr data-user="${esc(name)}"><td>${esc(name)}</td><td>${crossing.ceiling}</td><td>${crossing.date}</td><td class="risk">${crossing.reached ? "reached" : "projected"}</td></tr>`,
          )
          .join("")}</table>`;
  const rows = report.users
    .map((user) => {
      const crossing = user.crossings[0];
      const note = crossing ? `<div class="risk">${esc(describeCrossing(crossing))}</div>` : "";
      const state = user.enabled ? "" : ` <span class="muted">(disabled)</span>`;
      return `<div class="user" id="${esc(user.id)}"><div><b>${esc(user.name)}</b>${state}<div class="muted">${esc(userSummary(user))}; ceilings ${formatCeiling(user.dailyCeilingBytes)}/day, ${formatCeiling(user.monthlyCeilingBytes)}/month</div>${note}</div>${dailyChart(user, report.month)}${cumulativeChart(user, report.month)}</div>`;
    })
    .join("\n");
  return `<h2>Proxy users (${report.users.length})</h2>
<h3>Reaching a ceiling this month</h3>${risk}
${legend([
  [COLORS.traffic, "traffic (per day, left; cumulative, right)"],
  [COLORS.ceiling, "ceiling"],
  [COLORS.projection, "projected to month end at the last 7 days' pace"],
])}
<div id="users">${rows}</div>`;
}

function spendSection(report: Report): string {
  const { spend } = report;
  if (!isReadable(spend)) return `<h2>Spend</h2>${unreadable(spend)}`;
  const balance = spend.balanceCents === null ? "not readable" : formatDollars(spend.balanceCents);
  const chart =
    spend.byKind.length === 0
      ? "<p>No charges this month.</p>"
      : barChart(
          "charges by kind this month",
          spend.byKind.map((kind) => ({
            label: kind.kind,
            segments: [{ series: "spend", value: kind.cents, color: COLORS.traffic }],
          })),
          formatDollars,
        );
  return `<h2>Spend</h2><p>Balance <b id="balance">${esc(balance)}</b>; charged this month <b>${formatDollars(spend.totalCents)}</b>.</p>${chart}`;
}

function keysSection(report: Report): string {
  const { keys } = report;
  if (!isReadable(keys)) return `<h2>API keys</h2>${unreadable(keys)}`;
  const rows = keys
    .map(
      (key) =>
        `<tr class="${key.powerful ? "powerful" : ""}"><td>${esc(key.name)}<div class="muted">${esc(key.id)}</div></td><td>${key.scopes
          .map((scope) => (/^(billing|keys):write$/.test(scope) ? `<b>${esc(scope)}</b>` : esc(scope)))
          .join(
            ", ",
          )}</td><td>${key.ageDays} d</td><td>${day(key.expiresAt)}</td><td>${day(key.rotationDueAt)} <span class="muted">(${key.rotationSchedule})</span></td><td class="${key.status === "ok" ? "" : "warn"}">${key.status}</td></tr>`,
    )
    .join("");
  return `<h2>API keys (${keys.length})</h2><p class="muted">Highlighted: keys with billing:write or keys:write, which can spend the balance or mint keys.</p>
<table id="keys"><tr><th>Key</th><th>Scopes</th><th>Age</th><th>Expires</th><th>Rotation due</th><th>Status</th></tr>${rows}</table>`;
}

function stackSection(report: Report): string {
  const { stack } = report;
  if (!stack) return "";
  const coverage = barChart(
    "managed and unmanaged objects per kind",
    stack.kinds.map((kind) => ({
      label: kind.type,
      segments: [
        { series: "managed", value: kind.managed, color: COLORS.managed },
        { series: "unmanaged", value: kind.unmanaged, color: COLORS.unmanaged },
      ],
    })),
  );
  let drift: string;
  if (!isReadable(stack.drift)) drift = unreadable(stack.drift);
  else if (stack.drift.length === 0) drift = "<p>No drift: every managed object matches the state.</p>";
  else {
    const byType = new Map<string, { changed: number; deleted: number }>();
    for (const resource of stack.drift) {
      const entry = byType.get(resource.type) ?? { changed: 0, deleted: 0 };
      entry[resource.kind]++;
      byType.set(resource.type, entry);
    }
    drift = `${barChart(
      "drifted resources per type",
      [...byType].map(([type, counts]) => ({
        label: type.split(":").pop() ?? type,
        segments: [
          { series: "drift-changed", value: counts.changed, color: COLORS.drift },
          { series: "drift-deleted", value: counts.deleted, color: COLORS.ceiling },
        ],
      })),
    )}<table id="drift"><tr><th>Resource</th><th>What changed</th></tr>${stack.drift
      .map(
        (resource) =>
          `<tr><td>${esc(resource.name)}</td><td>${resource.kind === "deleted" ? "deleted outside Pulumi" : esc(resource.properties.map((p) => p.path).join(", "))}</td></tr>`,
      )
      .join("")}</table>`;
  }
  const findings =
    stack.findings.length === 0
      ? ""
      : `<p class="warn">Unmanaged keys that can spend or mint keys: ${stack.findings.map((key) => esc(`${key.name} (${key.id})`)).join(", ")}</p>`;
  return `<h2>Stack ${esc(stack.name)}: ${stack.percent} % managed</h2>${legend([
    [COLORS.managed, "managed"],
    [COLORS.unmanaged, "unmanaged"],
  ])}${coverage}${findings}<h3>Drift</h3>${drift}`;
}

/** One self-contained page: inline style, server-drawn SVG, no script and nothing fetched. */
export function renderHtml(report: Report): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Proxy account report ${esc(report.asOf)}</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head>
<body><h1>Proxy account report, ${esc(report.month.month)} (day ${report.month.today} of ${report.month.daysInMonth})</h1>
<p class="muted">${esc(report.apiUrl)} as of ${esc(report.asOf)}; generated ${esc(report.generatedAt)} in ${report.requests.total} requests. Traffic in GB of 10^9 bytes, as the ceilings count.</p>
${usersSection(report)}
${spendSection(report)}
${keysSection(report)}
${stackSection(report)}
<p class="muted">Total traffic this month: ${isReadable(report.users) ? formatBytes(report.users.reduce((sum, user) => sum + user.monthBytes, 0)) : "not readable"}.</p>
</body></html>
`;
}
