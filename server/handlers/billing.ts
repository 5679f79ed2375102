import type { TopUpBody } from "../../contract/billing";
import { LIST_LIMIT_DEFAULT, type ListQuery } from "../../contract/common";
import { renderCharge } from "../render";
import type { HandlerTable } from "./context";

export const billingHandlers: HandlerTable<"getBalance" | "listCharges" | "topUp"> = {
  getBalance(ctx) {
    return { balance_cents: ctx.store.balanceCents, currency: "usd" };
  },

  listCharges(ctx) {
    const query = ctx.query as ListQuery;
    const page = ctx.store.charges.page({
      cursor: query.cursor,
      limit: query.limit ?? LIST_LIMIT_DEFAULT,
      newestFirst: true,
    });
    return { charges: page.items.map(renderCharge), next_cursor: page.nextCursor };
  },

  /** Top-ups are credits, not charges, so they do not appear in the charge list. */
  topUp(ctx) {
    ctx.store.balanceCents += (ctx.body as TopUpBody).amount_cents;
    return { balance_cents: ctx.store.balanceCents, currency: "usd" };
  },
};
