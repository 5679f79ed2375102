import type { PagePromise } from "../core/pagination";
import { resolvePath } from "../core/path";
import type { RequestOptions, Transport } from "../core/transport";
import {
  type AllocateIpBody,
  IpAllocation,
  IpList,
  type IpListQuery,
  type ReplaceIpBody,
  ReplaceIpResult,
} from "../schemas/ips";
import { listPages } from "./shared";

/** Paths take the current address or the allocation id; the id survives a replacement. */
const one = (ipOrAllocationId: string) => resolvePath("/v1/ips/{ip}", { ip: ipOrAllocationId });

export class Ips {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  list(query?: IpListQuery, options?: RequestOptions): PagePromise<IpAllocation> {
    return listPages(this.#t, "/v1/ips", "ips", IpList, query, options);
  }

  get(ipOrAllocationId: string, options?: RequestOptions): Promise<IpAllocation> {
    return this.#t.call({ method: "GET", path: one(ipOrAllocationId), schema: IpAllocation }, options);
  }

  /** Records an `ip_allocation` charge; 409 `no_capacity` when the place has no free address. */
  allocate(body: AllocateIpBody, options?: RequestOptions): Promise<IpAllocation> {
    return this.#t.call({ method: "POST", path: "/v1/ips", body, schema: IpAllocation }, options);
  }

  async release(ipOrAllocationId: string, options?: RequestOptions): Promise<void> {
    await this.#t.call({ method: "DELETE", path: one(ipOrAllocationId) }, options);
  }

  /** Beyond two a month it is charged; set `max_charge_cents` to refuse a surprise charge. */
  replace(ipOrAllocationId: string, body: ReplaceIpBody, options?: RequestOptions): Promise<ReplaceIpResult> {
    return this.#t.call(
      { method: "POST", path: `${one(ipOrAllocationId)}/replace`, body, schema: ReplaceIpResult },
      options,
    );
  }
}
