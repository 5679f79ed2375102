import fs from "node:fs";
import { DUE_SOON_DAYS, describeDeadline } from "../deadlines";
import { formatValue, shortType } from "../format";
import { textTable } from "../table";
import type { DriftReport, ResourceDrift } from "./detect";

/** What `pulumi up --refresh` does: a planned step, or nothing when the refreshed state already satisfies the program. */
export function plannedLabel(drift: ResourceDrift): string {
  return drift.plannedOp ?? (drift.kind === "deleted" ? "create" : "none (the refresh records it)");
}

function rowsOf(drift: ResourceDrift): string[][] {
  const resource = `${drift.name} (${shortType(drift.type)})`;
  if (drift.kind === "deleted") return [[resource, "(the whole object)", "exists → deleted", plannedLabel(drift)]];
  return drift.properties.map((property, index) => [
    index === 0 ? resource : "",
    property.path,
    `${formatValue(property.recorded)} → ${formatValue(property.actual)}`,
    index === 0 ? plannedLabel(drift) : "",
  ]);
}

/** Keys to rotate or renew soon: not drift (the exit code ignores them), but the same job should see them. */
function dueSoonLines(report: DriftReport): string[] {
  if (report.keysDueSoon.length === 0) return [];
  return [
    "",
    `Keys due within ${DUE_SOON_DAYS} days:`,
    ...report.keysDueSoon.map((due) => `  - ${describeDeadline(due)}`),
  ];
}

/**
 * Closes a report with drift, once however many stacks it lists: a user who reads "update" and runs
 * a plain `pulumi up` would see no changes.
 */
export function plannedNote(anyDrift: boolean): string[] {
  return anyDrift
    ? ["PLANNED is what `pulumi up --refresh` does; a plain `pulumi up` acts on the recorded values."]
    : [];
}

/** A plain-text table: resource, property, recorded → actual, planned operation; then the keys due soon. */
export function formatDriftTable(report: DriftReport): string {
  return [driftTable(report), ...dueSoonLines(report)].join("\n");
}

function driftTable(report: DriftReport): string {
  if (report.drifted.length === 0)
    return `No drift in stack ${report.stack}: every resource matches its recorded state.`;
  const rows = [["RESOURCE", "PROPERTY", "RECORDED → ACTUAL", "PLANNED"], ...report.drifted.flatMap(rowsOf)];
  const count = report.drifted.length;
  return [
    `Drift in stack ${report.stack}: ${count} resource${count === 1 ? "" : "s"} changed outside Pulumi.`,
    "",
    ...textTable(rows),
  ].join("\n");
}

/**
 * Where `drift` writes: with `--json` (target "-") the JSON on stdout and the table on stderr; with
 * `--json=<file>` the JSON to the file and the table on stdout; without, the table on stdout.
 */
export function writeDriftOutput(table: string, target: string | undefined, json: () => object): void {
  if (target === undefined) {
    process.stdout.write(`${table}\n`);
    return;
  }
  const text = `${JSON.stringify(json(), null, 2)}\n`;
  if (target === "-") {
    process.stdout.write(text);
    process.stderr.write(`${table}\n`);
  } else {
    fs.writeFileSync(target, text);
    process.stdout.write(`${table}\n`);
  }
}
