import type { AllocateIpBody, IpAllocation, IpListQuery, ReplaceIpBody, ReplaceIpResult } from "../../contract/ips";
import type { PagePromise } from "../core/pagination";
import { ApiResource } from "../core/resource";
import type { RequestOptions } from "../core/transport";

/** Paths take the current address or the allocation id; the id survives a replacement. */
export class Ips extends ApiResource {
  list(query?: IpListQuery, options?: RequestOptions): PagePromise<IpAllocation> {
    return this.paginate("listIps", query, options);
  }

  get(ipOrAllocationId: string, options?: RequestOptions): Promise<IpAllocation> {
    return this.send("getIp", { path: { ip: ipOrAllocationId } }, options);
  }

  /** Records an `ip_allocation` charge; 409 `no_capacity` when the place has no free address. */
  allocate(body: AllocateIpBody, options?: RequestOptions): Promise<IpAllocation> {
    return this.send("allocateIp", { body }, options);
  }

  async release(ipOrAllocationId: string, options?: RequestOptions): Promise<void> {
    await this.send("releaseIp", { path: { ip: ipOrAllocationId } }, options);
  }

  /** Beyond two a month it is charged; set `max_charge_cents` to refuse a surprise charge. */
  replace(ipOrAllocationId: string, body: ReplaceIpBody, options?: RequestOptions): Promise<ReplaceIpResult> {
    return this.send("replaceIp", { path: { ip: ipOrAllocationId }, body }, options);
  }
}
