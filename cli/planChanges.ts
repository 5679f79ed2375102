import type { PropertyChange, ResourceChange } from "./planModel";
import type { PlannedStep } from "./planSteps";

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function propertyChanges(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  replaceKeys: string[],
  prefix = "",
): PropertyChange[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.flatMap((key) => {
    const path = prefix ? `${prefix}.${key}` : key;
    const old = before[key];
    const next = after[key];
    if (isPlainObject(old) && isPlainObject(next)) return propertyChanges(old, next, replaceKeys, path);
    if (JSON.stringify(old ?? null) === JSON.stringify(next ?? null)) return [];
    const topLevel = path.split(".")[0] ?? path;
    return [
      {
        path,
        ...(old !== undefined && old !== null ? { before: old } : {}),
        ...(next !== undefined && next !== null ? { after: next } : {}),
        forcesReplacement: replaceKeys.includes(topLevel),
      },
    ];
  });
}

const text = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/** What a change means for this service, in the reviewer's words. Secrets are never part of it. */
function notesFor(step: PlannedStep): string[] {
  const olds = { ...step.oldInputs, ...step.oldOutputs };
  const news = step.newInputs ?? {};
  const notes: string[] = [];
  if (step.type === "proxy:ApiKey") {
    if (step.op === "update" && olds.rotationTrigger !== news.rotationTrigger) {
      const hours = Number(news.graceHours ?? 24);
      notes.push(
        hours > 0 ? `secret rotated, old one valid for ${hours} h` : "secret rotated, old one stops working at once",
      );
    }
    if (step.op === "replace") notes.push("a new key and secret are created, then the old key is revoked at once");
    if (step.op === "delete") notes.push("revoked: every secret of the key stops working at once");
  }
  if (step.type === "proxy:IpAllocation") {
    if (step.op === "update" && olds.replaceTrigger !== news.replaceTrigger) {
      // The address itself may have changed outside Pulumi since; the cost section names the live one.
      notes.push(`address replaced in place (same allocation), reason "${text(news.replaceReason ?? "other")}"`);
    }
    if (step.op === "replace") notes.push(`a new allocation replaces ${text(olds.ip ?? "?")}, which is released`);
    if (step.op === "delete") notes.push(`address ${text(olds.ip ?? "?")} released; releasing refunds nothing`);
  }
  if (step.type === "proxy:ProxyUser") {
    if (step.op === "replace") notes.push("a new gateway login with a new password; the old login stops working");
    if (step.op === "delete") notes.push("the gateway login stops working");
  }
  if (step.newInputs?.adoptId !== undefined && step.op !== "update" && step.op !== "delete") {
    notes.push(`adopts the existing ${text(step.newInputs.adoptId)}: nothing is created or charged`);
  }
  return notes;
}

/** Every resource the plan changes, with its changed inputs and what the change means. */
export function describeChanges(steps: PlannedStep[]): ResourceChange[] {
  return steps.map((step) => ({
    urn: step.urn,
    name: step.name,
    type: step.type,
    op: step.op,
    properties:
      step.op === "delete" ? [] : propertyChanges(step.oldInputs ?? {}, step.newInputs ?? {}, step.replaceKeys),
    notes: notesFor(step),
  }));
}
