import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDPOINTS, type OperationId } from "../../contract/endpoints";
import { SCOPES } from "../../contract/keys";
import { type Api, expectError, startApi } from "./harness";

interface Case {
  /** What the key lacks: the request must be refused with 403 naming it. */
  scope: string;
  build(api: Api): Promise<{ method: string; path: string; body?: unknown }>;
}

let counter = 0;
const unique = (prefix: string): string => `${prefix}-${++counter}`;

/** One valid request per operation; the matrix sends it once with every scope but the needed one, once with only the needed ones. */
const CASES: Record<OperationId, Case[]> = {
  listProxyUsers: [{ scope: "proxy-users:read", build: async () => ({ method: "GET", path: "/v1/proxy-users" }) }],
  createProxyUser: [
    {
      scope: "proxy-users:write",
      build: async () => ({ method: "POST", path: "/v1/proxy-users", body: { name: unique("u") } }),
    },
    {
      scope: "limits:write",
      build: async () => ({
        method: "POST",
        path: "/v1/proxy-users",
        body: { name: unique("u"), limits: { daily_gb: 1 } },
      }),
    },
  ],
  getProxyUser: [
    {
      scope: "proxy-users:read",
      build: async (api) => ({ method: "GET", path: `/v1/proxy-users/${(await api.createUser(unique("u"))).id}` }),
    },
  ],
  updateProxyUser: [
    {
      scope: "proxy-users:write",
      build: async (api) => ({
        method: "PATCH",
        path: `/v1/proxy-users/${(await api.createUser(unique("u"))).id}`,
        body: { enabled: false },
      }),
    },
    {
      scope: "limits:write",
      build: async (api) => ({
        method: "PATCH",
        path: `/v1/proxy-users/${(await api.createUser(unique("u"))).id}`,
        body: { limits: { monthly_gb: 9 } },
      }),
    },
  ],
  disableProxyUser: [
    {
      scope: "proxy-users:write",
      build: async (api) => ({
        method: "POST",
        path: `/v1/proxy-users/${(await api.createUser(unique("u"))).id}/disable`,
      }),
    },
  ],
  deleteProxyUser: [
    {
      scope: "proxy-users:write",
      build: async (api) => ({ method: "DELETE", path: `/v1/proxy-users/${(await api.createUser(unique("u"))).id}` }),
    },
  ],
  listIps: [{ scope: "proxy-users:read", build: async () => ({ method: "GET", path: "/v1/ips?product=isp" }) }],
  getIp: [
    {
      scope: "proxy-users:read",
      build: async (api) => ({ method: "GET", path: `/v1/ips/${(await api.allocate()).ip}` }),
    },
  ],
  allocateIp: [
    {
      scope: "billing:write",
      build: async () => ({ method: "POST", path: "/v1/ips", body: { product: "isp", country: "de" } }),
    },
  ],
  releaseIp: [
    {
      scope: "billing:write",
      build: async (api) => ({ method: "DELETE", path: `/v1/ips/${(await api.allocate()).id}` }),
    },
  ],
  replaceIp: [
    {
      scope: "proxy-users:write",
      build: async (api) => ({
        method: "POST",
        path: `/v1/ips/${(await api.allocate()).ip}/replace`,
        body: { reason: "blacklisted" },
      }),
    },
    {
      scope: "billing:write",
      build: async (api) => {
        const allocation = await api.allocate();
        for (let i = 0; i < 2; i++)
          expect((await api.post(`/v1/ips/${allocation.id}/replace`, { reason: "slow" })).status).toBe(200);
        return { method: "POST", path: `/v1/ips/${allocation.id}/replace`, body: { reason: "slow" } };
      },
    },
  ],
  createApiKey: [
    {
      scope: "keys:write",
      build: async () => ({ method: "POST", path: "/v1/keys", body: { name: "ci", scopes: ["keys:write"] } }),
    },
  ],
  listApiKeys: [{ scope: "keys:write", build: async () => ({ method: "GET", path: "/v1/keys" }) }],
  getApiKey: [
    {
      scope: "keys:write",
      build: async (api) => ({
        method: "GET",
        path: `/v1/keys/${api.server.control.createKey({ name: "other", scopes: ["usage:read"] }).id}`,
      }),
    },
  ],
  rotateApiKey: [
    {
      scope: "keys:write",
      build: async (api) => ({
        method: "POST",
        path: `/v1/keys/${api.server.control.createKey({ name: "other", scopes: ["usage:read"] }).id}/rotate`,
        body: {},
      }),
    },
  ],
  revokeApiKey: [
    {
      scope: "keys:write",
      build: async (api) => ({
        method: "DELETE",
        path: `/v1/keys/${api.server.control.createKey({ name: "other", scopes: ["usage:read"] }).id}`,
      }),
    },
  ],
  getUsage: [
    { scope: "usage:read", build: async () => ({ method: "GET", path: "/v1/usage?from=2025-01-01&to=2025-01-31" }) },
  ],
  getBalance: [{ scope: "billing:read", build: async () => ({ method: "GET", path: "/v1/billing/balance" }) }],
  listCharges: [{ scope: "billing:read", build: async () => ({ method: "GET", path: "/v1/billing/charges" }) }],
  topUp: [
    {
      scope: "billing:write",
      build: async () => ({ method: "POST", path: "/v1/billing/top-up", body: { amount_cents: 100 } }),
    },
  ],
};

describe("scope matrix", () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ rateLimitPerMinute: 100_000, balanceCents: 1_000_000 });
  });
  afterAll(() => api.server.close());

  it("covers every endpoint of the table", () => {
    expect(Object.keys(CASES).sort()).toEqual(ENDPOINTS.map((endpoint) => endpoint.operationId).sort());
  });

  for (const endpoint of ENDPOINTS) {
    for (const [index, testCase] of CASES[endpoint.operationId].entries()) {
      it(`${endpoint.operationId} #${index + 1}: without ${testCase.scope} → 403 naming it; with the needed scopes → ${endpoint.status}`, async () => {
        const lacking = api.key(SCOPES.filter((scope) => scope !== testCase.scope));
        const refused = await build(testCase, api, lacking);
        expectError(refused, 403, "insufficient_scope");
        expect(refused.json.error.details.required_scopes).toContain(testCase.scope);
        expect(refused.json.error.details.missing_scopes).toEqual([testCase.scope]);

        const needed = new Set<string>([...endpoint.scopes, testCase.scope]);
        if (endpoint.operationId === "updateProxyUser")
          needed.delete(testCase.scope === "limits:write" ? "proxy-users:write" : "limits:write");
        const allowed = await build(testCase, api, api.key([...needed]));
        expect(allowed.status, JSON.stringify(allowed.json)).toBe(endpoint.status);
      });
    }
  }
});

async function build(testCase: Case, api: Api, key: string) {
  const request = await testCase.build(api);
  return api.call(request.method, request.path, { key, ...(request.body === undefined ? {} : { body: request.body }) });
}

describe("conditional and self-service scopes", () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ balanceCents: 1_000_000 });
  });
  afterAll(() => api.server.close());

  it("creating with limits needs limits:write as well, and the 403 lists both scopes", async () => {
    const writer = api.key(["proxy-users:write"]);
    const refused = await api.post("/v1/proxy-users", { name: "capped", limits: { daily_gb: 1 } }, { key: writer });
    expectError(refused, 403, "insufficient_scope");
    expect(refused.json.error.details.required_scopes).toEqual(["proxy-users:write", "limits:write"]);
    expect((await api.post("/v1/proxy-users", { name: "uncapped" }, { key: writer })).status).toBe(201);
  });

  it("the first two replacements need only proxy-users:write; a charged one needs billing:write", async () => {
    const writer = api.key(["proxy-users:write"]);
    const allocation = await api.allocate();
    for (let i = 0; i < 2; i++)
      expect((await api.post(`/v1/ips/${allocation.id}/replace`, { reason: "slow" }, { key: writer })).status).toBe(
        200,
      );
    const refused = await api.post(`/v1/ips/${allocation.id}/replace`, { reason: "slow" }, { key: writer });
    expectError(refused, 403, "insufficient_scope");
    expect(refused.json.error.details.required_scopes).toEqual(["proxy-users:write", "billing:write"]);
  });

  it("an empty PATCH is a write and needs proxy-users:write", async () => {
    const user = await api.createUser("empty-patch");
    expectError(
      await api.patch(`/v1/proxy-users/${user.id}`, {}, { key: api.key(["limits:write"]) }),
      403,
      "insufficient_scope",
    );
    expect((await api.patch(`/v1/proxy-users/${user.id}`, {}, { key: api.key(["proxy-users:write"]) })).status).toBe(
      200,
    );
  });

  it("a key may read and rotate itself without keys:write, but not another key", async () => {
    const self = api.server.control.createKey({ name: "self", scopes: ["usage:read"] });
    const other = api.server.control.createKey({ name: "other", scopes: ["usage:read"] });
    expect((await api.get(`/v1/keys/${self.id}`, { key: self.secret })).json.id).toBe(self.id);
    expectError(await api.get(`/v1/keys/${other.id}`, { key: self.secret }), 403, "insufficient_scope");
    expectError(await api.post(`/v1/keys/${other.id}/rotate`, {}, { key: self.secret }), 403, "insufficient_scope");
    const rotated = await api.post(`/v1/keys/${self.id}/rotate`, { grace_hours: 1 }, { key: self.secret });
    expect(rotated.status).toBe(200);
    expect((await api.get(`/v1/keys/${self.id}`, { key: rotated.json.secret })).status).toBe(200);
    expectError(await api.delete(`/v1/keys/${self.id}`, { key: self.secret }), 403, "insufficient_scope");
  });

  it("key creation cannot grant a scope the caller lacks", async () => {
    const admin = api.key(["keys:write", "usage:read"]);
    const refused = await api.post(
      "/v1/keys",
      { name: "wider", scopes: ["usage:read", "billing:write"] },
      { key: admin },
    );
    expectError(refused, 403, "scope_escalation");
    expect(refused.json.error.details.escalating_scopes).toEqual(["billing:write"]);
    const narrower = await api.post("/v1/keys", { name: "narrower", scopes: ["usage:read"] }, { key: admin });
    expect(narrower.status).toBe(201);
    expect(narrower.json.scopes).toEqual(["usage:read"]);
  });
});
