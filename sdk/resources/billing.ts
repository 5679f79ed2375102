import type { Balance, BillingCharge, TopUpBody } from "../../contract/billing";
import type { ListQuery } from "../../contract/common";
import type { PagePromise } from "../core/pagination";
import { ApiResource } from "../core/resource";
import type { RequestOptions } from "../core/transport";

export class Billing extends ApiResource {
  balance(options?: RequestOptions): Promise<Balance> {
    return this.send("getBalance", {}, options);
  }

  /** Newest first. */
  charges(query?: ListQuery, options?: RequestOptions): PagePromise<BillingCharge> {
    return this.paginate("listCharges", query, options);
  }

  /** Answers the new balance. The idempotency key makes a retried top-up count once. */
  topUp(body: TopUpBody, options?: RequestOptions): Promise<Balance> {
    return this.send("topUp", { body }, options);
  }
}
