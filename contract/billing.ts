import { z } from "zod";
import { ChargeId, Currency, ListQuery, listEnvelope, Timestamp } from "./common";

export const TOP_UP_MAX_CENTS = 10_000_000;

export const Balance = z.object({ balance_cents: z.number().int(), currency: Currency });
export type Balance = z.infer<typeof Balance>;

export const BillingCharge = z.object({
  id: ChargeId,
  kind: z.string(),
  amount_cents: z.number().int(),
  currency: Currency,
  created_at: Timestamp,
  ref: z.string().nullable(),
});
export type BillingCharge = z.infer<typeof BillingCharge>;

export const ChargeListQuery = ListQuery;
export const ChargeList = listEnvelope("charges", BillingCharge);
export type ChargeList = z.infer<typeof ChargeList>;

export const TopUpBody = z.strictObject({
  amount_cents: z
    .number()
    .int("must be a whole number of cents")
    .positive("must be positive")
    .max(TOP_UP_MAX_CENTS, `must be at most ${TOP_UP_MAX_CENTS}`),
});
export type TopUpBody = z.infer<typeof TopUpBody>;
