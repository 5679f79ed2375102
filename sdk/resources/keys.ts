import type { PagePromise } from "../core/pagination";
import { resolvePath } from "../core/path";
import type { RequestOptions, Transport } from "../core/transport";
import type { ListQuery } from "../schemas/common";
import { ApiKey, ApiKeyList, ApiKeyWithSecret, type CreateApiKeyBody, type RotateApiKeyBody } from "../schemas/keys";
import { listPages } from "./shared";

const one = (id: string) => resolvePath("/v1/keys/{id}", { id });

export class Keys {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  list(query?: ListQuery, options?: RequestOptions): PagePromise<ApiKey> {
    return listPages(this.#t, "/v1/keys", "keys", ApiKeyList, query, options);
  }

  get(id: string, options?: RequestOptions): Promise<ApiKey> {
    return this.#t.call({ method: "GET", path: one(id), schema: ApiKey }, options);
  }

  /** The answer's `secret` is shown once; store it before doing anything else. */
  create(body: CreateApiKeyBody, options?: RequestOptions): Promise<ApiKeyWithSecret> {
    return this.#t.call({ method: "POST", path: "/v1/keys", body, schema: ApiKeyWithSecret }, options);
  }

  /** The old secret keeps working for `grace_hours` (default 24, at most 168). */
  rotate(id: string, body: RotateApiKeyBody = {}, options?: RequestOptions): Promise<ApiKeyWithSecret> {
    return this.#t.call({ method: "POST", path: `${one(id)}/rotate`, body, schema: ApiKeyWithSecret }, options);
  }

  async revoke(id: string, options?: RequestOptions): Promise<void> {
    await this.#t.call({ method: "DELETE", path: one(id) }, options);
  }
}
