import type { EngineEvent } from "@pulumi/pulumi/automation";

/**
 * The policy packs' verdicts on a plan, as the engine reported them while it previewed: each
 * violation with its level, rule, pack and resource. The engine runs the packs (`--policy-pack`);
 * the plan only gathers what they said, so a reviewer reads it beside the changes it judges.
 */

/** `mandatory` fails the plan; `advisory` is the engine's `warning`, shown and passed. */
export type PolicyLevel = "mandatory" | "advisory";

export interface PolicyViolation {
  level: PolicyLevel;
  /** The rule's name, e.g. `proxy-user-monthly-ceiling`. */
  rule: string;
  pack: string;
  /** The resource's logical name, or "(stack)" for a stack-wide rule. */
  resource: string;
  /** The resource's type as the engine names it. */
  type?: string;
  /** The rule's own words: what breaks it and the fix. */
  message: string;
}

export interface PolicySection {
  /** The pack folders the preview ran, as given. */
  packs: string[];
  /** Mandatory violations first, then advisory, each by resource and rule. */
  violations: PolicyViolation[];
  /** True when a mandatory violation fails the plan. */
  failed: boolean;
}

/**
 * The engine sends the rule's description, then what this resource did, on the lines after it; the
 * reviewer needs the second (it names the value and the fix). A rule that reported nothing more
 * keeps its description.
 */
function specificPart(message: string): string {
  const lines = message
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  return (lines.length > 1 ? lines.slice(1) : lines).join(" ");
}

/** Gathers the policy events of a preview; the same violation reported twice (a retried step) counts once. */
export function policyCollector(): {
  onEvent: (event: EngineEvent) => void;
  section: (packs: string[]) => PolicySection;
} {
  const seen = new Map<string, PolicyViolation>();
  const onEvent = (event: EngineEvent) => {
    const policy = event.policyEvent;
    if (!policy) return;
    const urn = policy.resourceUrn ?? "";
    const violation: PolicyViolation = {
      level: policy.enforcementLevel === "mandatory" ? "mandatory" : "advisory",
      rule: policy.policyName,
      pack: policy.policyPackName,
      resource: urn ? (urn.split("::").pop() ?? urn) : "(stack)",
      ...(urn ? { type: urn.split("::")[2]?.split("$").pop() } : {}),
      message: specificPart(policy.message),
    };
    seen.set(JSON.stringify([violation.level, violation.rule, urn, violation.message]), violation);
  };
  const section = (packs: string[]): PolicySection => {
    const rank = (level: PolicyLevel) => (level === "mandatory" ? 0 : 1);
    const violations = [...seen.values()].sort(
      (a, b) => rank(a.level) - rank(b.level) || a.resource.localeCompare(b.resource) || a.rule.localeCompare(b.rule),
    );
    return { packs, violations, failed: violations.some((v) => v.level === "mandatory") };
  };
  return { onEvent, section };
}
