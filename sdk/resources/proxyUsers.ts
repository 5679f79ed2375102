import type { PagePromise } from "../core/pagination";
import { resolvePath } from "../core/path";
import type { RequestOptions, Transport } from "../core/transport";
import {
  CreatedProxyUser,
  type CreateProxyUserBody,
  ProxyUser,
  ProxyUserList,
  type UpdateProxyUserBody,
  type ProxyUserListQuery as WireProxyUserListQuery,
} from "../schemas/proxyUsers";
import { listPages } from "./shared";

/** The wire filter is the string "true"/"false"; a boolean is accepted too. */
export type ProxyUserListQuery = Omit<WireProxyUserListQuery, "enabled"> & {
  enabled?: boolean | "true" | "false" | undefined;
};

const one = (id: string) => resolvePath("/v1/proxy-users/{id}", { id });

export class ProxyUsers {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  list(query?: ProxyUserListQuery, options?: RequestOptions): PagePromise<ProxyUser> {
    return listPages(this.#t, "/v1/proxy-users", "proxy_users", ProxyUserList, query, options);
  }

  get(id: string, options?: RequestOptions): Promise<ProxyUser> {
    return this.#t.call({ method: "GET", path: one(id), schema: ProxyUser }, options);
  }

  /** The answer carries the gateway `password`, which the server never shows again. */
  create(body: CreateProxyUserBody, options?: RequestOptions): Promise<CreatedProxyUser> {
    return this.#t.call({ method: "POST", path: "/v1/proxy-users", body, schema: CreatedProxyUser }, options);
  }

  update(id: string, body: UpdateProxyUserBody, options?: RequestOptions): Promise<ProxyUser> {
    return this.#t.call({ method: "PATCH", path: one(id), body, schema: ProxyUser }, options);
  }

  disable(id: string, options?: RequestOptions): Promise<ProxyUser> {
    return this.#t.call({ method: "POST", path: `${one(id)}/disable`, schema: ProxyUser }, options);
  }

  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.#t.call({ method: "DELETE", path: one(id) }, options);
  }
}
