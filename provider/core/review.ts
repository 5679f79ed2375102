import type { IpAllocation as WireAllocation } from "../../sdk";

/**
 * What a change means for a reviewer, told by each kind (its descriptor's `review`) from the same rule
 * functions `up` runs: the `pulumi-proxy plan` command only gathers it. Secrets never appear: the
 * plan's values come from the engine with every secret masked.
 */

/** What a review needs of the account as it is now, asked only when a change needs it, and the time. */
export interface LiveAccount {
  nowMs: number;
  /** The allocation as the API holds it now; undefined when it is gone. */
  allocation(allocationId: string): Promise<WireAllocation | undefined>;
  /** What the proxy user carried today and this month (UTC), as the gateway counts it against ceilings. */
  traffic(proxyUserId: string): Promise<{ todayBytes: number; monthBytes: number }>;
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

export interface AccessEffects {
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
  /** `rotated`: why `up` rotates it. */
  reason?: string;
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
  /** A lowered or added ceiling at or below what the user carried this day or month: the gateway refuses it at once. */
  blocksNow?: boolean;
  /** GB the user carried this day (daily) or month (monthly), when the ceiling was lowered or added. */
  usedGb?: number;
}

/** A create that adopts an existing object makes nothing and charges nothing: every kind says so. */
export function adoptionNotes(change: { op: string; news?: object }): string[] {
  const adoptId = (change.news as { adoptId?: unknown } | undefined)?.adoptId;
  if (adoptId === undefined || (change.op !== "create" && change.op !== "replace")) return [];
  return [`adopts the existing ${String(adoptId)}: nothing is created or charged`];
}
