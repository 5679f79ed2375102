import type { ListQuery } from "../../contract/common";
import type { ApiKey, ApiKeyWithSecret, CreateApiKeyBody, RotateApiKeyBody } from "../../contract/keys";
import type { PagePromise } from "../core/pagination";
import { ApiResource } from "../core/resource";
import type { RequestOptions } from "../core/transport";

export class Keys extends ApiResource {
  list(query?: ListQuery, options?: RequestOptions): PagePromise<ApiKey> {
    return this.paginate("listApiKeys", query, options);
  }

  get(id: string, options?: RequestOptions): Promise<ApiKey> {
    return this.send("getApiKey", { path: { id } }, options);
  }

  /** The answer's `secret` is shown once; store it before doing anything else. */
  create(body: CreateApiKeyBody, options?: RequestOptions): Promise<ApiKeyWithSecret> {
    return this.send("createApiKey", { body }, options);
  }

  /** The old secret keeps working for `grace_hours` (default 24, at most 168). */
  rotate(id: string, body: RotateApiKeyBody = {}, options?: RequestOptions): Promise<ApiKeyWithSecret> {
    return this.send("rotateApiKey", { path: { id }, body }, options);
  }

  async revoke(id: string, options?: RequestOptions): Promise<void> {
    await this.send("revokeApiKey", { path: { id } }, options);
  }
}
