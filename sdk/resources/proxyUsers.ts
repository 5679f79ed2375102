import type {
  CreatedProxyUser,
  CreateProxyUserBody,
  ProxyUser,
  UpdateProxyUserBody,
  ProxyUserListQuery as WireProxyUserListQuery,
} from "../../contract/proxyUsers";
import type { PagePromise } from "../core/pagination";
import { ApiResource } from "../core/resource";
import type { RequestOptions } from "../core/transport";

/** The wire filter is the string "true"/"false"; a boolean is accepted too. */
export type ProxyUserListQuery = Omit<WireProxyUserListQuery, "enabled"> & {
  enabled?: boolean | "true" | "false" | undefined;
};

export class ProxyUsers extends ApiResource {
  list(query?: ProxyUserListQuery, options?: RequestOptions): PagePromise<ProxyUser> {
    return this.paginate("listProxyUsers", query, options);
  }

  get(id: string, options?: RequestOptions): Promise<ProxyUser> {
    return this.send("getProxyUser", { path: { id } }, options);
  }

  /** The answer carries the gateway `password`, which the server never shows again. */
  create(body: CreateProxyUserBody, options?: RequestOptions): Promise<CreatedProxyUser> {
    return this.send("createProxyUser", { body }, options);
  }

  update(id: string, body: UpdateProxyUserBody, options?: RequestOptions): Promise<ProxyUser> {
    return this.send("updateProxyUser", { path: { id }, body }, options);
  }

  disable(id: string, options?: RequestOptions): Promise<ProxyUser> {
    return this.send("disableProxyUser", { path: { id } }, options);
  }

  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.send("deleteProxyUser", { path: { id } }, options);
  }
}
