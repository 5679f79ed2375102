import { z } from "zod";
import { camelized } from "../program/camelized";
import { describeFunction } from "./descriptor";

const Charge = z.object({
  id: z.string().describe("The charge's id (ch_…)."),
  kind: z.string().describe("What was charged: an allocation, a renewal, a replacement."),
  amountCents: z.number().int().describe("The amount in cents."),
  currency: z.enum(["usd"]).describe("The amount's currency."),
  createdAt: z.string().describe("When it was charged (ISO 8601, UTC)."),
  ref: z.string().nullable().describe("The object charged for (an allocation's id), if any."),
});

/** An ISO 8601 date or timestamp, as `Date.parse` reads it. */
const Instant = z.string().refine((text) => !Number.isNaN(Date.parse(text)), "must be an ISO 8601 date or timestamp");

export const getCharges = describeFunction({
  name: "getCharges",
  description: "The account's charges, newest first, optionally only those since an instant.",
  action: "list charges",
  inputs: {
    since: Instant.optional().describe(
      "Only charges created at or after this instant (ISO 8601 date or timestamp); default all.",
    ),
  },
  outputs: {
    charges: z.array(Charge).describe("The charges, newest first."),
    totalCents: z.number().int().describe("The sum of the charges' amounts, in cents."),
  },
  operations: ["listCharges"],
  example: { since: "2026-11-01T00:00:00Z" },
  async call(client, { since }) {
    const from = since === undefined ? Number.NEGATIVE_INFINITY : Date.parse(since);
    const charges: z.input<typeof Charge>[] = [];
    // Newest first: the walk stops at the first charge older than `since`.
    for await (const charge of client.billing.charges({ limit: 200 })) {
      if (Date.parse(charge.created_at) < from) break;
      charges.push(camelized(charge));
    }
    return { charges, totalCents: charges.reduce((sum, charge) => sum + charge.amountCents, 0) };
  },
});
