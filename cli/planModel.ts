import type { PlanOp } from "./planSteps";

/**
 * The stable shape of `pulumi-proxy plan --json` (`version: 1`). Fields are only ever added within
 * a version; a rename or a removal bumps `version`. Secrets never appear: a secret value is
 * "[secret]", a value known only after apply is "[unknown]", and an absent value is omitted.
 */
export interface PlanJson {
  version: 1;
  stack: string;
  cwd: string;
  /** When the plan was made: the cost depends on the day (remaining term) and the UTC month (free replacements). */
  plannedAt: string;
  refresh: boolean;
  hasChanges: boolean;
  summary: Record<PlanOp, number>;
  changes: ResourceChange[];
  cost: CostSection;
  access: AccessSection;
}

export interface ResourceChange {
  urn: string;
  name: string;
  type: string;
  op: PlanOp;
  /** Inputs that change (for create: every input that is set), by dotted path. */
  properties: PropertyChange[];
  /** What the change means in the reviewer's words, e.g. "secret rotated, old one valid for 24 h". */
  notes: string[];
}

export interface PropertyChange {
  path: string;
  /** Omitted when the property was absent. */
  before?: unknown;
  /** Omitted when the property becomes absent. */
  after?: unknown;
  /** True when changing this input replaces the resource. */
  forcesReplacement: boolean;
}

export interface CostSection {
  currency: "usd";
  /** The sum of every charge the plan incurs (refused replacements excluded, they charge nothing). */
  totalCents: number;
  /** The same total, e.g. "$4.90". */
  total: string;
  items: CostItem[];
}

export interface CostItem {
  urn: string;
  name: string;
  /** `allocation`: one term charged up front; `replacement`: a swap of the address in place. */
  kind: "allocation" | "replacement";
  product: "isp" | "dedicated";
  /** What this item charges if it goes through; 0 for a free replacement. */
  amountCents: number;
  reason: string;
  /** The allocation, for a replacement: as the API reports it now. */
  allocationId?: string;
  ip?: string;
  /** Replacement only: within this month's free ones. */
  free?: boolean;
  /** Replacement only: free replacements this allocation has left this UTC month, before this one. */
  freeReplacementsRemaining?: number;
  /** Replacement only: the whole days left in the term that the charge is prorated over. */
  remainingTermDays?: number;
  /** Replacement only: the resource's `maxReplacementChargeCents` (absent means 0). */
  maxChargeCents?: number;
  /** Replacement only: the charge exceeds `maxReplacementChargeCents`, so the API refuses it and `up` fails. */
  willBeRefused?: boolean;
}

export const SENSITIVE_SCOPES = ["billing:write", "keys:write"] as const;

export interface AccessSection {
  keys: KeyAccessChange[];
  users: UserAccessChange[];
  ceilings: CeilingChange[];
}

export interface KeyAccessChange {
  urn: string;
  name: string;
  /** The key's `name` input. */
  keyName: string;
  change: "created" | "adopted" | "replaced" | "revoked" | "rotated";
  /** The scopes the key holds after the change (before it, for `revoked`). */
  scopes: string[];
  /** `replaced` only: the old key's scopes. */
  previousScopes?: string[];
  /** Scopes the key gains: every scope of a new key, the added ones of a replacement. */
  addedScopes: string[];
  removedScopes: string[];
  /** The gained scopes among billing:write and keys:write: highlighted for the reviewer. */
  sensitiveScopes: string[];
  /** `rotated`: how long the old secret keeps working. */
  graceHours?: number;
  /** What this does to integrations using the key, in words. */
  impact: string;
}

export interface UserAccessChange {
  urn: string;
  name: string;
  /** The gateway login. */
  username: string;
  change: "created" | "deleted" | "replaced" | "enabled" | "disabled" | "released" | "held";
  impact: string;
}

export interface CeilingChange {
  urn: string;
  name: string;
  username: string;
  limit: "dailyGb" | "monthlyGb";
  change: "raised" | "lowered" | "removed" | "added";
  /** GB; null is no ceiling. */
  before: number | null;
  after: number | null;
}
