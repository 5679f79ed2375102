import { LIST_LIMIT_DEFAULT } from "../../contract/common";
import type { Scope } from "../../contract/keys";
import {
  type CreateProxyUserBody,
  dailyWithinMonthly,
  type ProxyUserListQuery,
  type UpdateProxyUserBody,
} from "../../contract/proxyUsers";
import { requireScopes } from "../auth";
import { ApiError, invalidRequest, notFound } from "../errors";
import { renderProxyUser } from "../render";
import type { ProxyUserRecord, Store } from "../store";
import { newId, randomToken, sha256Hex } from "../tokens";
import { type HandlerTable, pathParam } from "./context";

function findProxyUser(store: Store, id: string): ProxyUserRecord {
  const user = store.proxyUsers.get(id);
  if (!user) throw notFound("The proxy user");
  return user;
}

function checkMergedLimits(limits: ProxyUserRecord["limits"]): void {
  if (!dailyWithinMonthly(limits)) {
    throw invalidRequest([
      { path: "limits.daily_gb", message: `must not exceed monthly_gb (${String(limits.monthly_gb)})` },
    ]);
  }
}

export const proxyUserHandlers: HandlerTable<
  "listProxyUsers" | "createProxyUser" | "getProxyUser" | "updateProxyUser" | "disableProxyUser" | "deleteProxyUser"
> = {
  listProxyUsers(ctx) {
    const query = ctx.query as ProxyUserListQuery;
    const enabled = query.enabled === undefined ? undefined : query.enabled === "true";
    const page = ctx.store.proxyUsers.page({
      cursor: query.cursor,
      limit: query.limit ?? LIST_LIMIT_DEFAULT,
      filter: enabled === undefined ? undefined : (user) => user.enabled === enabled,
    });
    return { proxy_users: page.items.map(renderProxyUser), next_cursor: page.nextCursor };
  },

  createProxyUser(ctx) {
    const body = ctx.body as CreateProxyUserBody;
    if (body.limits !== undefined) requireScopes(ctx.caller, ["proxy-users:write", "limits:write"]);
    if (ctx.store.proxyUserByName(body.name)) {
      throw new ApiError("conflict", `A proxy user named ${body.name} already exists.`, { field: "name" });
    }
    const password = randomToken(24);
    const user: ProxyUserRecord = {
      id: newId("pu"),
      seq: ctx.store.nextSeq(),
      name: body.name,
      limits: { daily_gb: body.limits?.daily_gb ?? null, monthly_gb: body.limits?.monthly_gb ?? null },
      enabled: body.enabled ?? true,
      createdAt: ctx.now,
      updatedAt: ctx.now,
      passwordHash: sha256Hex(password),
    };
    ctx.store.addProxyUser(user);
    return { ...renderProxyUser(user), password };
  },

  getProxyUser(ctx) {
    return renderProxyUser(findProxyUser(ctx.store, pathParam(ctx, "id")));
  },

  updateProxyUser(ctx) {
    const body = ctx.body as UpdateProxyUserBody;
    requireScopes(ctx.caller, scopesForUpdate(body));
    const user = findProxyUser(ctx.store, pathParam(ctx, "id"));
    const limits = {
      daily_gb: body.limits?.daily_gb !== undefined ? body.limits.daily_gb : user.limits.daily_gb,
      monthly_gb: body.limits?.monthly_gb !== undefined ? body.limits.monthly_gb : user.limits.monthly_gb,
    };
    checkMergedLimits(limits);
    const enabled = body.enabled ?? user.enabled;
    if (
      enabled !== user.enabled ||
      limits.daily_gb !== user.limits.daily_gb ||
      limits.monthly_gb !== user.limits.monthly_gb
    ) {
      ctx.store.noteProxyUserChange(user, ctx.now);
      user.limits = limits;
      user.enabled = enabled;
      user.updatedAt = ctx.now;
    }
    return renderProxyUser(user);
  },

  disableProxyUser(ctx) {
    const user = findProxyUser(ctx.store, pathParam(ctx, "id"));
    if (user.enabled) {
      ctx.store.noteProxyUserChange(user, ctx.now);
      user.enabled = false;
      user.updatedAt = ctx.now;
    }
    return renderProxyUser(user);
  },

  deleteProxyUser(ctx) {
    const user = findProxyUser(ctx.store, pathParam(ctx, "id"));
    ctx.store.noteProxyUserChange(user, ctx.now);
    ctx.store.deleteProxyUser(user);
    return undefined;
  },
};

/** An empty PATCH changes nothing but is still a write, so it needs proxy-users:write rather than no scope at all. */
export function scopesForUpdate(body: UpdateProxyUserBody): Scope[] {
  const needed: Scope[] = [];
  if (body.enabled !== undefined || body.limits === undefined) needed.push("proxy-users:write");
  if (body.limits !== undefined) needed.push("limits:write");
  return needed;
}
