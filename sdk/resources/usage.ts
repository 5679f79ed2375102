import type { RequestOptions, Transport } from "../core/transport";
import { type UsageQuery, UsageReport } from "../schemas/usage";
import { toQuery } from "./shared";

export class Usage {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** `from` and `to` are calendar dates (YYYY-MM-DD). */
  get(query: UsageQuery, options?: RequestOptions): Promise<UsageReport> {
    return this.#t.call({ method: "GET", path: "/v1/usage", query: toQuery(query), schema: UsageReport }, options);
  }
}
