import { LIST_LIMIT_DEFAULT, type ListQuery } from "../../contract/common";
import { type CreateApiKeyBody, GRACE_HOURS_DEFAULT, type RotateApiKeyBody, type Scope } from "../../contract/keys";
import { HOUR_MS } from "../clock";
import { ApiError, invalidRequest, notFound } from "../errors";
import { renderKey } from "../render";
import type { KeyRecord, Store } from "../store";
import { newId, newSecret, secretHint, sha256Hex } from "../tokens";
import { type HandlerTable, pathParam } from "./context";

function findKey(store: Store, id: string): KeyRecord {
  const key = store.keys.get(id);
  if (!key) throw notFound("The API key");
  return key;
}

/** Shared by the API and the dashboard-like control: returns the only copy of the secret there will ever be. */
export function createKey(
  store: Store,
  now: number,
  spec: { name: string; scopes: Scope[]; expiresAt: number | null; root?: boolean; secret?: string },
): { record: KeyRecord; secret: string } {
  const secret = spec.secret ?? newSecret();
  const record: KeyRecord = {
    id: newId("key"),
    seq: store.nextSeq(),
    name: spec.name,
    scopes: [...spec.scopes],
    createdAt: now,
    expiresAt: spec.expiresAt,
    lastRotatedAt: null,
    root: spec.root ?? false,
    current: { hash: sha256Hex(secret), hint: secretHint(secret) },
    previous: null,
  };
  store.addKey(record);
  return { record, secret };
}

export const keyHandlers: HandlerTable<"createApiKey" | "listApiKeys" | "getApiKey" | "rotateApiKey" | "revokeApiKey"> =
  {
    createApiKey(ctx) {
      const body = ctx.body as CreateApiKeyBody;
      const escalating = body.scopes.filter((scope) => !ctx.caller.scopes.includes(scope));
      if (escalating.length > 0) {
        throw new ApiError(
          "scope_escalation",
          `A key cannot grant scopes it does not hold: ${escalating.join(", ")}.`,
          {
            escalating_scopes: escalating,
          },
        );
      }
      const expiresAt = body.expires_at === undefined ? null : Date.parse(body.expires_at);
      if (expiresAt !== null && expiresAt <= ctx.now)
        throw invalidRequest([{ path: "expires_at", message: "must be in the future" }]);
      const { record, secret } = createKey(ctx.store, ctx.now, { name: body.name, scopes: body.scopes, expiresAt });
      return { ...renderKey(record, ctx.now), secret };
    },

    listApiKeys(ctx) {
      const query = ctx.query as ListQuery;
      const page = ctx.store.keys.page({ cursor: query.cursor, limit: query.limit ?? LIST_LIMIT_DEFAULT });
      return { keys: page.items.map((key) => renderKey(key, ctx.now)), next_cursor: page.nextCursor };
    },

    getApiKey(ctx) {
      return renderKey(findKey(ctx.store, pathParam(ctx, "id")), ctx.now);
    },

    /**
     * At most two secrets live at once: the new one, and the one just replaced for its grace period.
     * Whatever was still in an earlier grace period stops working now.
     */
    rotateApiKey(ctx) {
      const body = ctx.body as RotateApiKeyBody;
      const key = findKey(ctx.store, pathParam(ctx, "id"));
      const graceHours = body.grace_hours ?? GRACE_HOURS_DEFAULT;
      const secret = newSecret();
      const previous = graceHours > 0 ? { ...key.current, expiresAt: ctx.now + graceHours * HOUR_MS } : null;
      ctx.store.setKeySecrets(key, { hash: sha256Hex(secret), hint: secretHint(secret) }, previous);
      key.lastRotatedAt = ctx.now;
      ctx.secretsRetired(key.id, false);
      return { ...renderKey(key, ctx.now), secret };
    },

    revokeApiKey(ctx) {
      const key = findKey(ctx.store, pathParam(ctx, "id"));
      ctx.store.deleteKey(key);
      ctx.secretsRetired(key.id, true);
      return undefined;
    },
  };
