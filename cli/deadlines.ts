import { DAY_MS } from "../contract/pricing";
import { kindOfType } from "../provider/kinds";

/** How far ahead `pulumi-proxy plan` and `drift` look for a key's rotation or expiry. */
export const DUE_SOON_DAYS = 7;

/** An object whose scheduled rotation (`rotateAfterDays`) or expiry (`expiresAt`) is near or past. */
export interface KeyDeadline {
  urn: string;
  /** The resource's name in the program. */
  name: string;
  /** The object's name at the API (`keyName`: keys were the first kind with deadlines; the JSON keeps it). */
  keyName: string;
  event: "rotation" | "expiry";
  at: string;
  /** Whole days from now until `at`, rounded toward zero: negative once it has passed. */
  inDays: number;
  /** `at` has passed: a rotation is overdue (the next `up` makes it), an expired key no longer works. */
  passed: boolean;
}

/** A resource as the state holds it: dynamic and native keys alike, by their type token. */
export interface StoredResource {
  urn: string;
  type: string;
  outputs?: Record<string, unknown>;
}

/**
 * The objects of a stack due to rotate or expire within `DUE_SOON_DAYS`, soonest first, from the
 * dates the state recorded, as each kind's descriptor reads them (`deadlines`). Reads names and dates
 * only, never a secret.
 */
export function keyDeadlines(resources: readonly StoredResource[], nowMs: number): KeyDeadline[] {
  const horizon = nowMs + DUE_SOON_DAYS * DAY_MS;
  const deadlines: KeyDeadline[] = [];
  for (const { urn, type, outputs = {} } of resources) {
    const deadlinesOf = kindOfType(type)?.deadlines;
    if (!deadlinesOf) continue;
    const base = { urn, name: urn.split("::").pop() ?? urn, keyName: String(outputs.name ?? "?") };
    for (const { event, at } of deadlinesOf(outputs)) {
      if (at.getTime() > horizon) continue;
      const inDays = Math.trunc((at.getTime() - nowMs) / DAY_MS);
      deadlines.push({ ...base, event, at: at.toISOString(), inDays, passed: at.getTime() <= nowMs });
    }
  }
  return deadlines.sort((a, b) => a.at.localeCompare(b.at));
}

/** One line for a reviewer: `reports (key "reports"): rotation due 2030-01-31T00:00:00.000Z, in 3 days`. */
export function describeDeadline(deadline: KeyDeadline): string {
  const what = deadline.event === "rotation" ? "rotation (rotateAfterDays) due" : "expires";
  const days = Math.abs(deadline.inDays);
  const span = days === 0 ? "less than a day" : `${days} day${days === 1 ? "" : "s"}`;
  const consequence = deadline.event === "rotation" ? "the next up rotates it" : "the key no longer works";
  const when = deadline.passed ? `${span} ago: ${consequence}` : `in ${span}`;
  return `${deadline.name} (key "${deadline.keyName}"): ${what} ${deadline.at}, ${when}`;
}
