import type { EngineEvent, Stack, StepEventMetadata } from "@pulumi/pulumi/automation";
import { kindOfType } from "../../provider/kinds";
import { type KeyDeadline, keyDeadlines, type StoredResource } from "../deadlines";
import { isEngineOwnType, masked, propertyDifferences, resourceName } from "../engineEvents";

export interface PropertyDrift {
  /** Dotted path, e.g. `limits.monthlyGb`. */
  path: string;
  recorded: unknown;
  actual: unknown;
}

export interface ResourceDrift {
  urn: string;
  name: string;
  type: string;
  /** `changed`: the object differs from state; `deleted`: it no longer exists. */
  kind: "changed" | "deleted";
  properties: PropertyDrift[];
  /** What `pulumi up --refresh` would do about it, when the preview says (update, replace, create…). */
  plannedOp?: string;
}

export interface DriftReport {
  stack: string;
  drifted: ResourceDrift[];
  /** Keys whose scheduled rotation or expiry is within 7 days (or past), by the refreshed state. */
  keysDueSoon: KeyDeadline[];
}

/** The recorded and the refreshed outputs, masked alike, compared leaf by leaf. */
function propertyDrifts(recorded: Record<string, unknown>, actual: Record<string, unknown>): PropertyDrift[] {
  const bag = (outputs: Record<string, unknown>) => masked(outputs) as Record<string, unknown>;
  return propertyDifferences(bag(recorded), bag(actual)).map(({ path, before, after }) => ({
    path,
    recorded: before,
    actual: after,
  }));
}

function driftOf(step: StepEventMetadata): ResourceDrift | undefined {
  if (isEngineOwnType(step.type) || !step.old) return undefined;
  const base = { urn: step.urn, name: resourceName(step.urn), type: step.type };
  if (!step.new) return { ...base, kind: "deleted", properties: [] };
  // Status outputs change without anyone touching the object (see the resource's declaration).
  const status = kindOfType(step.type)?.statusOutputs ?? [];
  const properties = propertyDrifts(step.old.outputs ?? {}, step.new.outputs ?? {}).filter(
    (property) => !status.includes(property.path),
  );
  return properties.length > 0 ? { ...base, kind: "changed", properties } : undefined;
}

/**
 * Runs `pulumi preview --refresh` and reports what changed outside Pulumi: the refresh step of each
 * resource compares the recorded state with what the API returns now. Dynamic providers give the
 * engine no per-property diff, so the properties are compared here, with secrets kept masked.
 */
export async function detectDrift(
  stack: Stack,
  engineOutput?: { onOutput?: (out: string) => void },
): Promise<DriftReport> {
  const drifted = new Map<string, ResourceDrift>();
  const plannedOps = new Map<string, string>();
  const refreshed: StoredResource[] = [];
  const onEvent = (event: EngineEvent) => {
    const step = event.resOutputsEvent?.metadata ?? event.resourcePreEvent?.metadata;
    if (!step) return;
    if (step.op === "refresh" && event.resOutputsEvent && step.new) {
      refreshed.push({ urn: step.urn, type: step.type, outputs: step.new.outputs });
    }
    if (step.op === "refresh") {
      const drift = event.resOutputsEvent ? driftOf(step) : undefined;
      if (drift) drifted.set(step.urn, drift);
    } else if (step.op !== "same" && !isEngineOwnType(step.type)) {
      plannedOps.set(step.urn, step.op);
    }
  };
  await stack.preview({ refresh: true, onEvent, ...engineOutput });
  const report = [...drifted.values()].map((drift) => {
    const plannedOp = plannedOps.get(drift.urn);
    return plannedOp ? { ...drift, plannedOp } : drift;
  });
  return {
    stack: stack.name,
    drifted: report.sort((a, b) => a.urn.localeCompare(b.urn)),
    keysDueSoon: keyDeadlines(refreshed, Date.now()),
  };
}
