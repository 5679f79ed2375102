import { ApiResource } from "../core/resource";
import type { RequestOptions } from "../core/transport";
import type { UsageQuery, UsageReport } from "../schemas/usage";

export class Usage extends ApiResource {
  /** `from` and `to` are calendar dates (YYYY-MM-DD). */
  get(query: UsageQuery, options?: RequestOptions): Promise<UsageReport> {
    return this.send("getUsage", { query }, options);
  }
}
