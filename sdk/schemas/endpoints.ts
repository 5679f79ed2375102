import type { z } from "zod";
import * as billing from "./billing";
import * as ips from "./ips";
import type { Scope } from "./keys";
import * as keys from "./keys";
import * as users from "./proxyUsers";
import * as usage from "./usage";

/**
 * Every endpoint of the management API, once. The reference server routes and validates from this
 * table, and the OpenAPI document is generated from it, so the three can never drift apart.
 */
export interface Endpoint {
  readonly operationId: string;
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** OpenAPI-style path, with `{param}` segments. */
  readonly path: string;
  readonly summary: string;
  /** Scopes always required. Conditional ones (for example limits:write when a body sets limits) are in `scopeNote`. */
  readonly scopes: readonly Scope[];
  readonly scopeNote?: string;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  readonly status: 200 | 201 | 204;
  readonly response?: z.ZodType;
}

export const ENDPOINTS = [
  {
    operationId: "listProxyUsers",
    method: "GET",
    path: "/v1/proxy-users",
    summary: "List proxy users",
    scopes: ["proxy-users:read"],
    query: users.ProxyUserListQuery,
    status: 200,
    response: users.ProxyUserList,
  },
  {
    operationId: "createProxyUser",
    method: "POST",
    path: "/v1/proxy-users",
    summary: "Create a proxy user",
    scopes: ["proxy-users:write"],
    scopeNote: "limits:write too when the body has limits",
    body: users.CreateProxyUserBody,
    status: 201,
    response: users.CreatedProxyUser,
  },
  {
    operationId: "getProxyUser",
    method: "GET",
    path: "/v1/proxy-users/{id}",
    summary: "Get a proxy user",
    scopes: ["proxy-users:read"],
    status: 200,
    response: users.ProxyUser,
  },
  {
    operationId: "updateProxyUser",
    method: "PATCH",
    path: "/v1/proxy-users/{id}",
    summary: "Change limits or the enabled flag",
    scopes: [],
    scopeNote: "limits:write for limits, proxy-users:write for enabled",
    body: users.UpdateProxyUserBody,
    status: 200,
    response: users.ProxyUser,
  },
  {
    operationId: "disableProxyUser",
    method: "POST",
    path: "/v1/proxy-users/{id}/disable",
    summary: "Disable a proxy user at once",
    scopes: ["proxy-users:write"],
    status: 200,
    response: users.ProxyUser,
  },
  {
    operationId: "deleteProxyUser",
    method: "DELETE",
    path: "/v1/proxy-users/{id}",
    summary: "Delete a proxy user",
    scopes: ["proxy-users:write"],
    status: 204,
  },

  {
    operationId: "listIps",
    method: "GET",
    path: "/v1/ips",
    summary: "List allocated IPs",
    scopes: ["proxy-users:read"],
    query: ips.IpListQuery,
    status: 200,
    response: ips.IpList,
  },
  {
    operationId: "getIp",
    method: "GET",
    path: "/v1/ips/{ip}",
    summary: "Get an allocation by address or allocation id",
    scopes: ["proxy-users:read"],
    status: 200,
    response: ips.IpAllocation,
  },
  {
    operationId: "allocateIp",
    method: "POST",
    path: "/v1/ips",
    summary: "Allocate an address",
    scopes: ["billing:write"],
    body: ips.AllocateIpBody,
    status: 201,
    response: ips.IpAllocation,
  },
  {
    operationId: "releaseIp",
    method: "DELETE",
    path: "/v1/ips/{ip}",
    summary: "Release an address to the pool",
    scopes: ["billing:write"],
    status: 204,
  },
  {
    operationId: "replaceIp",
    method: "POST",
    path: "/v1/ips/{ip}/replace",
    summary: "Swap an address for another one",
    scopes: ["proxy-users:write"],
    scopeNote: "billing:write too when the replacement will be charged",
    body: ips.ReplaceIpBody,
    status: 200,
    response: ips.ReplaceIpResult,
  },

  {
    operationId: "createApiKey",
    method: "POST",
    path: "/v1/keys",
    summary: "Create an API key",
    scopes: ["keys:write"],
    body: keys.CreateApiKeyBody,
    status: 201,
    response: keys.ApiKeyWithSecret,
  },
  {
    operationId: "listApiKeys",
    method: "GET",
    path: "/v1/keys",
    summary: "List API keys, never with secrets",
    scopes: ["keys:write"],
    query: keys.ApiKeyListQuery,
    status: 200,
    response: keys.ApiKeyList,
  },
  {
    operationId: "getApiKey",
    method: "GET",
    path: "/v1/keys/{id}",
    summary: "Get an API key",
    scopes: ["keys:write"],
    scopeNote: "or the key itself",
    status: 200,
    response: keys.ApiKey,
  },
  {
    operationId: "rotateApiKey",
    method: "POST",
    path: "/v1/keys/{id}/rotate",
    summary: "Issue a new secret; the old one lasts grace_hours",
    scopes: ["keys:write"],
    scopeNote: "or the key itself",
    body: keys.RotateApiKeyBody,
    status: 200,
    response: keys.ApiKeyWithSecret,
  },
  {
    operationId: "revokeApiKey",
    method: "DELETE",
    path: "/v1/keys/{id}",
    summary: "Revoke every secret of a key",
    scopes: ["keys:write"],
    status: 204,
  },

  {
    operationId: "getUsage",
    method: "GET",
    path: "/v1/usage",
    summary: "Traffic and request statistics",
    scopes: ["usage:read"],
    query: usage.UsageQuery,
    status: 200,
    response: usage.UsageReport,
  },

  {
    operationId: "getBalance",
    method: "GET",
    path: "/v1/billing/balance",
    summary: "Account balance",
    scopes: ["billing:read"],
    status: 200,
    response: billing.Balance,
  },
  {
    operationId: "listCharges",
    method: "GET",
    path: "/v1/billing/charges",
    summary: "Charges, newest first",
    scopes: ["billing:read"],
    query: billing.ChargeListQuery,
    status: 200,
    response: billing.ChargeList,
  },
  {
    operationId: "topUp",
    method: "POST",
    path: "/v1/billing/top-up",
    summary: "Add funds",
    scopes: ["billing:write"],
    body: billing.TopUpBody,
    status: 200,
    response: billing.Balance,
  },
] as const satisfies readonly Endpoint[];

export type OperationId = (typeof ENDPOINTS)[number]["operationId"];
