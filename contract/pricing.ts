import type { IpProduct } from "./ips";

/**
 * The service's price list and charging rules for addresses, in one place. The reference server
 * charges with these functions and `pulumi-proxy plan` predicts charges with them, so the plan and
 * the bill cannot disagree by construction.
 */

/** A term lasts 30 days and renews implicitly; allocation is charged one term up front. */
export const TERM_DAYS = 30;
/** One day in milliseconds. */
export const DAY_MS = 24 * 60 * 60 * 1000;
export const TERM_MS = TERM_DAYS * DAY_MS;

/** Cents per 30-day term. */
export const TERM_PRICE_CENTS: Readonly<Record<IpProduct, number>> = { isp: 300, dedicated: 500 };

/** Replacements of one allocation that are free in each UTC calendar month. */
export const FREE_REPLACEMENTS_PER_MONTH = 2;

/** Whole days left in the term that ends at `renewsAtMs`, 1..30: a part-day counts as a day. */
export function remainingTermDays(renewsAtMs: number, nowMs: number): number {
  return Math.min(TERM_DAYS, Math.max(1, Math.ceil((renewsAtMs - nowMs) / DAY_MS)));
}

/** A charged replacement costs the unused part of the term: ceil(price × remaining days / 30). */
export function proratedCents(product: IpProduct, remainingDays: number): number {
  return Math.ceil((TERM_PRICE_CENTS[product] * remainingDays) / TERM_DAYS);
}

export interface ReplacementQuote {
  /** 0 while this month's free replacements last. */
  chargeCents: number;
  free: boolean;
  remainingTermDays: number;
}

/**
 * What the next replacement of an allocation costs at `nowMs`, from what the API reports about it:
 * its product, how many replacements it had this UTC month, and when its term renews.
 */
export function quoteReplacement(
  allocation: { product: IpProduct; replacementsThisMonth: number; renewsAtMs: number },
  nowMs: number,
): ReplacementQuote {
  const days = remainingTermDays(allocation.renewsAtMs, nowMs);
  const free = allocation.replacementsThisMonth < FREE_REPLACEMENTS_PER_MONTH;
  return { chargeCents: free ? 0 : proratedCents(allocation.product, days), free, remainingTermDays: days };
}

/** `490` → `"$4.90"`. */
export function formatDollars(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}$${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}
