import { z } from "zod";
import { describeFunction } from "./descriptor";

export const getBalance = describeFunction({
  name: "getBalance",
  description: "The account's prepaid balance.",
  action: "read the balance",
  inputs: {},
  outputs: {
    balanceCents: z.number().int().describe("The balance in cents; charges draw it down."),
    currency: z.enum(["usd"]).describe("The balance's currency."),
  },
  operations: ["getBalance"],
  example: {},
  async call(client) {
    const balance = await client.billing.balance();
    return { balanceCents: balance.balance_cents, currency: balance.currency };
  },
});
