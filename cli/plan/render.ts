import { formatDollars } from "../../contract/pricing";
import { DUE_SOON_DAYS, describeDeadline } from "../deadlines";
import { formatValue } from "../format";
import type { CeilingChange, CostItem, KeyAccessChange, PlanJson, PolicySection, ResourceChange } from "./model";

/**
 * The plan in words, as plain text (a terminal) or Markdown (a PR comment, a job summary). Both are
 * built from the same lines; only the emphasis differs. Values pass through `formatValue`, and
 * secrets arrive here already masked.
 */
interface Style {
  code(text: string): string;
  strong(text: string): string;
  heading(text: string): string;
  /** A scope the reviewer must not miss: billing:write, keys:write. */
  highlight(text: string): string;
  bullet: string;
}

const TEXT: Style = {
  code: (t) => t,
  strong: (t) => t.toUpperCase(),
  heading: (t) => `== ${t}`,
  highlight: (t) => `${t} (!)`,
  bullet: "  - ",
};
const MARKDOWN: Style = {
  code: (t) => `\`${t.replaceAll("`", "'")}\``,
  strong: (t) => `**${t}**`,
  heading: (t) => `### ${t}`,
  highlight: (t) => `**${t}**`,
  bullet: "- ",
};

/** Reasons and impacts are written as clauses; in a list they start a sentence. */
const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;

/** A marker the PR workflow finds to update its comment in place instead of adding one per push. */
export const markdownMarker = (stack: string) => `<!-- pulumi-proxy-plan stack=${stack} -->`;

function headline(plan: PlanJson, s: Style): string {
  if (!plan.hasChanges) return `Plan for stack ${s.code(plan.stack)}: no changes.`;
  const counts = (["create", "update", "replace", "delete"] as const)
    .filter((op) => plan.summary[op] > 0)
    .map((op) => `${plan.summary[op]} to ${op}`)
    .join(", ");
  const sensitive = plan.access.keys.filter((key) => key.sensitiveScopes.length > 0).length;
  const refused = plan.cost.items.filter((item) => item.willBeRefused).length;
  const warnings = [
    sensitive > 0
      ? `${sensitive} key${sensitive === 1 ? "" : "s"} gain${sensitive === 1 ? "s" : ""} billing:write or keys:write`
      : "",
    refused > 0 ? `${refused} replacement${refused === 1 ? "" : "s"} will be refused` : "",
  ].filter(Boolean);
  return [
    `Plan for stack ${s.code(plan.stack)}: ${counts}. Cost ${s.strong(plan.cost.total)}.`,
    ...warnings.map((warning) => `${s === MARKDOWN ? "⚠️ " : "WARNING: "}${warning}`),
  ].join(s === MARKDOWN ? "<br>\n" : "\n");
}

function costStatus(item: CostItem, s: Style): string {
  if (item.kind === "allocation") return "charged";
  if (item.willBeRefused) return s.strong("will be refused");
  if (item.free) return "free";
  return `charged, fits max ${item.maxChargeCents} cents`;
}

function costLines(plan: PlanJson, s: Style): string[] {
  const { cost } = plan;
  const title = `Cost: ${cost.total} (${cost.totalCents} cents)`;
  if (cost.items.length === 0) return [s.heading(title), "", "Nothing in this plan is charged."];
  const lines = cost.items.map((item) => {
    const amount = formatDollars(item.amountCents);
    const shown = item.willBeRefused ? `${amount}, not charged` : amount;
    return `${s.bullet}${s.code(item.name)} ${item.kind}: ${shown} — ${costStatus(item, s)}. ${sentence(item.reason)}`;
  });
  return [
    s.heading(title),
    "",
    ...lines,
    "",
    `Priced as of ${plan.plannedAt} from the allocations as the API reports them; the free replacements reset each UTC month.`,
  ];
}

function scopesText(scopes: string[], highlight: string[], s: Style): string {
  if (scopes.length === 0) return "(none)";
  return scopes.map((scope) => (highlight.includes(scope) ? s.highlight(s.code(scope)) : s.code(scope))).join(", ");
}

function keyLine(key: KeyAccessChange, s: Style): string {
  const name = s.code(key.keyName);
  const flag = key.sensitiveScopes.length > 0 ? `${s === MARKDOWN ? "⚠️ " : "(!) "}` : "";
  const widened = [
    key.addedScopes.length > 0 ? `gains ${scopesText(key.addedScopes, key.sensitiveScopes, s)}` : "",
    key.removedScopes.length > 0 && key.change !== "revoked" ? `loses ${scopesText(key.removedScopes, [], s)}` : "",
  ].filter(Boolean);
  const scopes =
    key.change === "replaced"
      ? `scopes ${scopesText(key.previousScopes ?? [], [], s)} → ${scopesText(key.scopes, key.sensitiveScopes, s)} (${widened.join("; ") || "same scopes"})`
      : `scopes ${scopesText(key.scopes, key.sensitiveScopes, s)}`;
  return `${s.bullet}${flag}key ${name} ${s.strong(key.change)}: ${scopes}. ${sentence(key.impact)}`;
}

const gbText = (value: number | null) => (value === null ? "no ceiling" : `${value} GB`);

function ceilingLine(ceiling: CeilingChange, s: Style): string {
  const which = ceiling.limit === "dailyGb" ? "daily" : "monthly";
  const line = `${s.bullet}${s.code(ceiling.username)} ${which} ceiling ${s.strong(ceiling.change)}: ${gbText(ceiling.before)} → ${gbText(ceiling.after)}`;
  const period = ceiling.limit === "dailyGb" ? "today" : "this month";
  return ceiling.blocksNow
    ? `${line}; ${s.highlight(`blocks the user at once: ${ceiling.usedGb} GB used ${period}, new requests get 407`)}`
    : line;
}

function accessLines(plan: PlanJson, s: Style): string[] {
  const { keys, users, ceilings } = plan.access;
  if (keys.length + users.length + ceilings.length === 0) {
    return [s.heading("Access"), "", "No key, gateway login or traffic ceiling changes."];
  }
  const section = (title: string, lines: string[]) => (lines.length > 0 ? [`${title}:`, ...lines, ""] : []);
  return [
    s.heading("Access"),
    "",
    ...section(
      "API keys",
      keys.map((key) => keyLine(key, s)),
    ),
    ...section(
      "Proxy users",
      users.map((user) => `${s.bullet}${s.code(user.username)} ${s.strong(user.change)}: ${sentence(user.impact)}`),
    ),
    ...section(
      "Traffic ceilings",
      ceilings.map((ceiling) => ceilingLine(ceiling, s)),
    ),
  ].slice(0, -1);
}

function changeLines(change: ResourceChange, s: Style): string[] {
  const header = `${s.bullet}${s.code(change.name)} (${change.type}) ${s.strong(change.op)}`;
  const indent = s === MARKDOWN ? "  - " : "      ";
  const properties = change.properties.map((property) => {
    const before = "before" in property ? formatValue(property.before) : "(absent)";
    const after = "after" in property ? formatValue(property.after) : "(absent)";
    const arrow = change.op === "create" ? after : `${before} → ${after}`;
    return `${indent}${property.path}: ${s.code(arrow)}${property.forcesReplacement ? " (forces replacement)" : ""}`;
  });
  return [header, ...properties, ...change.notes.map((note) => `${indent}${sentence(note)}`)];
}

/** The packs' verdicts, first in the plan: a mandatory violation is what stops the merge. */
function policyLines(policy: PolicySection, s: Style): string[] {
  const packs = policy.packs.map((pack) => s.code(pack.split(/[\\/]/).pop() ?? pack)).join(", ");
  const mandatory = policy.violations.filter((v) => v.level === "mandatory").length;
  const advisory = policy.violations.length - mandatory;
  if (policy.violations.length === 0) {
    return [s.heading("Policy"), "", `${s === MARKDOWN ? "✅ " : ""}No policy violations (${packs}).`];
  }
  const counts = [
    mandatory > 0 ? `${mandatory} mandatory violation${mandatory === 1 ? "" : "s"}` : "",
    advisory > 0 ? `${advisory} advisory` : "",
  ].filter(Boolean);
  const verdict =
    mandatory > 0 ? "this change cannot be applied until they are fixed" : "advisory only, nothing blocks";
  const flag = s === MARKDOWN ? (mandatory > 0 ? "⛔ " : "⚠️ ") : "";
  return [
    s.heading("Policy"),
    "",
    `${flag}${counts.join(", ")} (${packs}): ${verdict}.`,
    "",
    ...policy.violations.map(
      (v) => `${s.bullet}${s.strong(v.level)} ${s.code(v.rule)} on ${s.code(v.resource)}: ${v.message}`,
    ),
  ];
}

function render(plan: PlanJson, s: Style): string {
  const lines = [headline(plan, s)];
  if (plan.policy) lines.push("", ...policyLines(plan.policy, s));
  if (plan.hasChanges) {
    lines.push("", ...costLines(plan, s), "", ...accessLines(plan, s), "", s.heading("Changes"), "");
    for (const change of plan.changes) lines.push(...changeLines(change, s));
  }
  if (plan.keysDueSoon.length > 0) {
    lines.push("", s.heading(`Keys due within ${DUE_SOON_DAYS} days`), "");
    lines.push(...plan.keysDueSoon.map((deadline) => `${s.bullet}${describeDeadline(deadline)}`));
  }
  return lines.join("\n");
}

export function formatPlanText(plan: PlanJson): string {
  return render(plan, TEXT);
}

export function formatPlanMarkdown(plan: PlanJson): string {
  const refreshed = plan.refresh ? " with --refresh" : "";
  return [
    markdownMarker(plan.stack),
    `## pulumi-proxy plan: ${plan.stack}`,
    "",
    render(plan, MARKDOWN),
    "",
    `<sub>Made by \`pulumi-proxy plan\`${refreshed} at ${plan.plannedAt}. Secrets are never shown.</sub>`,
  ].join("\n");
}
