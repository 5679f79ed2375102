import type { AccessEffects, CostItem } from "../../provider/core/review";
import type { KeyDeadline } from "../deadlines";
import type { PolicySection } from "./policy";
import type { PlanOp } from "./steps";

export { SENSITIVE_SCOPES } from "../../contract/keys";
export type {
  CeilingChange,
  CostItem,
  KeyAccessChange,
  UserAccessChange,
} from "../../provider/core/review";
export type { KeyDeadline } from "../deadlines";
export type { PolicySection, PolicyViolation } from "./policy";
export type AccessSection = AccessEffects;

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
  /** Keys whose scheduled rotation or expiry is within 7 days (or past), by the state before this plan. */
  keysDueSoon: KeyDeadline[];
  /** Present when `--policy-pack` ran: the packs' verdicts, mandatory violations first. */
  policy?: PolicySection;
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
