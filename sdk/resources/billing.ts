import type { PagePromise } from "../core/pagination";
import type { RequestOptions, Transport } from "../core/transport";
import { Balance, type BillingCharge, ChargeList, type TopUpBody } from "../schemas/billing";
import type { ListQuery } from "../schemas/common";
import { listPages } from "./shared";

export class Billing {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  balance(options?: RequestOptions): Promise<Balance> {
    return this.#t.call({ method: "GET", path: "/v1/billing/balance", schema: Balance }, options);
  }

  /** Newest first. */
  charges(query?: ListQuery, options?: RequestOptions): PagePromise<BillingCharge> {
    return listPages(this.#t, "/v1/billing/charges", "charges", ChargeList, query, options);
  }

  /** Answers the new balance. The idempotency key makes a retried top-up count once. */
  topUp(body: TopUpBody, options?: RequestOptions): Promise<Balance> {
    return this.#t.call({ method: "POST", path: "/v1/billing/top-up", body, schema: Balance }, options);
  }
}
