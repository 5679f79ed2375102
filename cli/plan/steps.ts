import type { EngineEvent, Stack, StepEventMetadata } from "@pulumi/pulumi/automation";
import { isEngineOwnType, masked, resourceName } from "../engineEvents";
import { shortType } from "../format";
import { type PolicySection, policyCollector } from "./policy";

export type PlanOp = "create" | "update" | "replace" | "delete";

/** One resource the preview will change, with the values a reviewer may see (secrets masked). */
export interface PlannedStep {
  urn: string;
  /** The logical name in the program. */
  name: string;
  /** `proxy:ApiKey`, `proxy:IpAllocation`, `proxy:ProxyUser`, or another provider's type. */
  type: string;
  op: PlanOp;
  /** The resource id in state, for update, replace and delete. */
  id?: string;
  /** Recorded inputs and outputs (refreshed with --refresh); absent for create. */
  oldInputs?: Record<string, unknown>;
  oldOutputs?: Record<string, unknown>;
  /** The program's checked inputs; absent for delete. */
  newInputs?: Record<string, unknown>;
  /** Top-level inputs whose change forces the replacement. */
  replaceKeys: string[];
}

/** The engine names each part of a replacement; the reviewer sees one replacement. */
const OPS: Record<string, PlanOp> = {
  create: "create",
  update: "update",
  delete: "delete",
  replace: "replace",
  "create-replacement": "replace",
  "delete-replaced": "replace",
};

function bag(value: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return value === undefined ? undefined : (masked(value) as Record<string, unknown>);
}

function stepOf(meta: StepEventMetadata, op: PlanOp): PlannedStep {
  const id = meta.old?.id;
  const oldInputs = bag(meta.old?.inputs);
  const oldOutputs = bag(meta.old?.outputs);
  const newInputs = op === "delete" ? undefined : bag(meta.new?.inputs);
  return {
    urn: meta.urn,
    name: resourceName(meta.urn),
    type: shortType(meta.type),
    op,
    ...(id ? { id } : {}),
    ...(oldInputs ? { oldInputs } : {}),
    ...(oldOutputs ? { oldOutputs } : {}),
    ...(newInputs ? { newInputs } : {}),
    replaceKeys: meta.keys ?? [],
  };
}

/**
 * Gathers the steps that change something from a stream of engine events, by type and name: the
 * engine runs steps in parallel, and a PR comment must not reshuffle per push. The engine's own step
 * metadata is the source: old and new inputs, recorded outputs, and the keys that force a replacement.
 */
export function stepCollector(): { onEvent: (event: EngineEvent) => void; steps: () => PlannedStep[] } {
  const steps = new Map<string, PlannedStep>();
  const onEvent = (event: EngineEvent) => {
    const meta = event.resourcePreEvent?.metadata;
    if (!meta || isEngineOwnType(meta.type)) return;
    const op = OPS[meta.op];
    if (!op) return;
    // Of a replacement's three events, the `replace` one carries both the old and the new state.
    if (steps.has(meta.urn) && meta.op !== "replace") return;
    steps.set(meta.urn, stepOf(meta, op));
  };
  const sorted = () => [...steps.values()].sort((a, b) => a.type.localeCompare(b.type) || a.name.localeCompare(b.name));
  return { onEvent, steps: sorted };
}

export interface PreviewOptions {
  refresh: boolean;
  /** Policy pack folders and their config files, as `pulumi preview --policy-pack(-config)` takes them. */
  policyPacks: string[];
  policyPackConfigs: string[];
}

/**
 * Runs `pulumi preview` (with `--refresh` and the policy packs when asked) and returns the steps
 * that change something, and the packs' verdicts when packs ran. A preview that failed only because
 * a pack's mandatory rule did still yields its plan: the reviewer needs the changes and the verdict.
 */
export async function previewSteps(
  stack: Stack,
  options: PreviewOptions,
): Promise<{ steps: PlannedStep[]; policy?: PolicySection }> {
  const steps = stepCollector();
  const policy = policyCollector();
  const { refresh, policyPacks, policyPackConfigs } = options;
  // A resource's own error (a check that failed, say) makes a plan that is not whole: never hidden.
  let resourceFailed = false;
  const onEvent = (event: EngineEvent) => {
    steps.onEvent(event);
    policy.onEvent(event);
    const diagnostic = event.diagnosticEvent;
    if (diagnostic?.severity === "error" && diagnostic.urn && !isEngineOwnType(diagnostic.urn.split("::")[2] ?? "")) {
      resourceFailed = true;
    }
  };
  const packs = policyPacks.length > 0 ? { policyPacks, policyPackConfigs } : {};
  try {
    await stack.preview({ refresh, onEvent, ...packs });
  } catch (error) {
    if (resourceFailed || !policy.section(policyPacks).failed) throw error;
  }
  return { steps: steps.steps(), ...(policyPacks.length > 0 ? { policy: policy.section(policyPacks) } : {}) };
}
