import type { BillingCharge } from "../contract/billing";
import type { IpAllocation } from "../contract/ips";
import type { ApiKey } from "../contract/keys";
import { FREE_REPLACEMENTS_PER_MONTH, TERM_MS } from "../contract/pricing";
import type { ProxyUser } from "../contract/proxyUsers";
import { isoTimestamp, utcMonth } from "./clock";
import type { AllocationRecord, ChargeRecord, KeyRecord, ProxyUserRecord } from "./store";

/** Records → wire objects. The wire types come from the shared schemas, so a drift fails to compile. */

export function renderProxyUser(record: ProxyUserRecord): ProxyUser {
  return {
    id: record.id,
    name: record.name,
    username: record.name,
    limits: { daily_gb: record.limits.daily_gb, monthly_gb: record.limits.monthly_gb },
    enabled: record.enabled,
    created_at: isoTimestamp(record.createdAt),
    updated_at: isoTimestamp(record.updatedAt),
  };
}

/** Index of the 30-day term holding `now`, counted from the allocation: renewal is implicit and lazy. */
export function termIndex(record: AllocationRecord, now: number): number {
  return Math.max(0, Math.floor((now - record.allocatedAt) / TERM_MS));
}

export function renewsAt(record: AllocationRecord, now: number): number {
  return record.allocatedAt + (termIndex(record, now) + 1) * TERM_MS;
}

export function replacementsThisMonth(record: AllocationRecord, now: number): number {
  return record.replacementMonth === utcMonth(now) ? record.replacementsInMonth : 0;
}

export function renderAllocation(record: AllocationRecord, now: number): IpAllocation {
  const used = replacementsThisMonth(record, now);
  return {
    id: record.id,
    ip: record.ip,
    product: record.product,
    country: record.country,
    city: record.city,
    asn: record.asn,
    allocated_at: isoTimestamp(record.allocatedAt),
    renews_at: isoTimestamp(renewsAt(record, now)),
    health: record.health,
    blacklists: record.blacklists,
    replacements_this_month: used,
    free_replacements_remaining: Math.max(0, FREE_REPLACEMENTS_PER_MONTH - used),
  };
}

/** The previous secret only counts while its grace period runs. */
export function livePrevious(record: KeyRecord, now: number): KeyRecord["previous"] {
  return record.previous && now < record.previous.expiresAt ? record.previous : null;
}

export function renderKey(record: KeyRecord, now: number): ApiKey {
  const previous = livePrevious(record, now);
  return {
    id: record.id,
    name: record.name,
    scopes: [...record.scopes],
    created_at: isoTimestamp(record.createdAt),
    expires_at: record.expiresAt === null ? null : isoTimestamp(record.expiresAt),
    last_rotated_at: record.lastRotatedAt === null ? null : isoTimestamp(record.lastRotatedAt),
    previous_secret_expires_at: previous ? isoTimestamp(previous.expiresAt) : null,
    secret_hint: record.current.hint,
  };
}

export function renderCharge(record: ChargeRecord): BillingCharge {
  return {
    id: record.id,
    kind: record.kind,
    amount_cents: record.amountCents,
    currency: "usd",
    created_at: isoTimestamp(record.createdAt),
    ref: record.ref,
  };
}
