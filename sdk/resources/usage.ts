import type { UsageQuery, UsageReport } from "../../contract/usage";
import { ApiResource } from "../core/resource";
import type { RequestOptions } from "../core/transport";

export class Usage extends ApiResource {
  /** `from` and `to` are calendar dates (YYYY-MM-DD). */
  get(query: UsageQuery, options?: RequestOptions): Promise<UsageReport> {
    return this.send("getUsage", { query }, options);
  }
}
