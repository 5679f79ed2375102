import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKey, IpAllocation, ProxyUser } from "../../provider";
import { configure, handlers } from "../../provider/runtime";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { type ProviderFixture, providerFixture } from "../support/fixture";

async function failuresOf(kind: keyof typeof handlers, news: Record<string, unknown>) {
  const result = await handlers[kind].check!({}, news);
  return result.failures ?? [];
}

/**
 * A failure names its input as the engine's property when that input is set; a nested path or a
 * missing input goes with no property (the engine would print `{<nil>}` for it), its reason naming it.
 */
describe("check rejects bad input with a reason per property", () => {
  // Valid inputs are then checked against the API (provider/core/credentials.ts): one that answers.
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    const config: Record<string, string> = { "proxy:apiUrl": server.url, "proxy:apiKey": server.rootKey };
    configure({ config: { get: (key: string) => config[key] } } as never);
  });
  afterAll(() => server?.close());

  it.each([
    ["an uppercase name", { name: "Scraper" }, "name", /a-z/],
    ["a name starting with a digit", { name: "1scraper" }, "name", /starting with a letter/],
    ["a 64-character name", { name: "a".repeat(64) }, "name", /1-63/],
    ["a negative limit", { name: "ok", limits: { dailyGb: -1 } }, "", /at least 0.*got -1/],
    ["a NaN limit", { name: "ok", limits: { monthlyGb: Number.NaN } }, "", /NaN/],
    ["a limit above the bound", { name: "ok", limits: { monthlyGb: 100_001 } }, "", /at most 100000/],
    ["four decimals", { name: "ok", limits: { dailyGb: 1.2345 } }, "", /3 decimals/],
    [
      "daily above monthly",
      { name: "ok", limits: { dailyGb: 20, monthlyGb: 10 } },
      "",
      /must not exceed limits.monthlyGb/,
    ],
    ["an unknown limit", { name: "ok", limits: { weeklyGb: 1 } }, "", /dailyGb and monthlyGb/],
  ])("ProxyUser: %s", async (_case, news, property, reason) => {
    const failures = await failuresOf("proxyUser", news);
    expect(failures).toContainEqual({ property, reason: expect.stringMatching(reason) });
  });

  it.each([
    ["an unknown scope", { name: "k", scopes: ["usage:write"] }, "", /not a scope; use one of usage:read/],
    ["a duplicate scope", { name: "k", scopes: ["usage:read", "usage:read"] }, "scopes", /repeat/],
    ["no scopes", { name: "k", scopes: [] }, "scopes", /at least one/],
    ["grace hours above 168", { name: "k", scopes: ["usage:read"], graceHours: 169 }, "graceHours", /at most 168/],
    ["negative grace hours", { name: "k", scopes: ["usage:read"], graceHours: -1 }, "graceHours", /at least 0/],
    ["fractional grace hours", { name: "k", scopes: ["usage:read"], graceHours: 1.5 }, "graceHours", /whole number/],
    ["an empty name", { name: "", scopes: ["usage:read"] }, "name", /empty/],
    ["an unparsable expiry", { name: "k", scopes: ["usage:read"], expiresAt: "soon" }, "expiresAt", /ISO 8601/],
  ])("ApiKey: %s", async (_case, news, property, reason) => {
    expect(await failuresOf("apiKey", news)).toContainEqual({ property, reason: expect.stringMatching(reason) });
  });

  it.each([
    ["a three-letter country", { product: "isp", country: "deu" }, "country", /two-letter/],
    ["a numeric country", { product: "isp", country: "d1" }, "country", /two-letter/],
    ["an unknown product", { product: "mobile", country: "de" }, "product", /isp|dedicated/],
    [
      "a negative charge ceiling",
      { product: "isp", country: "de", maxReplacementChargeCents: -5 },
      "maxReplacementChargeCents",
      /at least 0/,
    ],
    [
      "a 201-character reason",
      { product: "isp", country: "de", replaceReason: "x".repeat(201) },
      "replaceReason",
      /at most 200/,
    ],
  ])("IpAllocation: %s", async (_case, news, property, reason) => {
    expect(await failuresOf("ipAllocation", news)).toContainEqual({ property, reason: expect.stringMatching(reason) });
  });

  it.each([
    ["proxyUser", { name: 5, limits: "big", enabled: "no", adoptId: "x" }],
    ["proxyUser", { name: "ok", limits: { dailyGb: "5", monthlyGb: -1, weeklyGb: 1 } }],
    ["apiKey", { name: "", scopes: "usage:read", graceHours: "24", expiresAt: 5, adoptId: "pu_123456" }],
    ["apiKey", { name: "k".repeat(64), scopes: [7], rotationTrigger: {} }],
    [
      "ipAllocation",
      {
        product: "mobile",
        country: 7,
        city: "Berlin!",
        keepCity: "yes",
        maxReplacementChargeCents: 1.5,
        adoptId: "zz",
      },
    ],
  ] as const)("words every %s failure plainly, naming the field and never in zod's terms", async (kind, news) => {
    const failures = await failuresOf(kind, news);
    expect(failures.length).toBeGreaterThanOrEqual(Object.keys(news).length - 1);
    for (const { property, reason } of failures) {
      expect(property === "" || reason.startsWith(`${property} `)).toBe(true);
      expect(reason).toMatch(/^[a-zA-Z]+[\w.[\]]* /);
      expect(reason).not.toMatch(/expected|received|Invalid|Too (small|big)|Unrecognized|>=|<=/);
    }
  });

  it("states the allowed values and the bound in words", async () => {
    const ip = await failuresOf("ipAllocation", { product: "mobile", country: "de", maxReplacementChargeCents: 1.5 });
    expect(ip).toEqual([
      { property: "product", reason: 'product must be one of isp, dedicated (got "mobile")' },
      { property: "maxReplacementChargeCents", reason: "maxReplacementChargeCents must be a whole number (got 1.5)" },
    ]);
    expect(await failuresOf("proxyUser", { name: "ok", limits: "big" })).toEqual([
      { property: "limits", reason: 'limits must be an object (got "big")' },
    ]);
  });

  it("refuses an expiry in the past at preview, but not one already deployed that has since passed", async () => {
    const past = { name: "k", scopes: ["usage:read"], expiresAt: "2001-01-01T00:00:00Z" };
    expect(await failuresOf("apiKey", past)).toEqual([
      { property: "expiresAt", reason: 'expiresAt must be in the future (got "2001-01-01T00:00:00.000Z")' },
    ]);
    expect(await handlers.apiKey.check!({ ...past, graceHours: 24 }, past)).toMatchObject({
      inputs: { expiresAt: "2001-01-01T00:00:00.000Z" },
    });
    const future = { ...past, expiresAt: new Date(Date.now() + 86_400_000).toISOString() };
    expect(await failuresOf("apiKey", future)).toEqual([]);
  });

  it("lets values the engine does not know yet pass, to be checked once known", async () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    expect(await failuresOf("apiKey", { name: unknown, scopes: ["usage:read", unknown], expiresAt: unknown })).toEqual(
      [],
    );
    expect(await failuresOf("proxyUser", { name: "ok", limits: { dailyGb: unknown, monthlyGb: -1 } })).toEqual([
      // A nested path goes to the engine with no property: it would print the value at the top level.
      { property: "", reason: "limits.monthlyGb must be at least 0 (got -1)" },
    ]);
  });

  it("normalizes what it accepts, so diffs compare like with like", async () => {
    expect(await handlers.apiKey.check!({}, { name: "k", scopes: ["keys:write", "usage:read"] })).toEqual({
      inputs: { name: "k", scopes: ["usage:read", "keys:write"], graceHours: 24 },
    });
    expect(await handlers.ipAllocation.check!({}, { product: "isp", country: " DE ", city: "Berlin" })).toMatchObject({
      inputs: { country: "de", city: "berlin", replaceReason: "other", keepCity: false },
    });
    expect(await handlers.proxyUser.check!({}, { name: "ok", limits: { dailyGb: 2 } })).toEqual({
      inputs: { name: "ok", limits: { dailyGb: 2, monthlyGb: null }, enabled: true },
    });
    // `pulumi config set --path … 2.5` stores a decimal as text.
    expect(await handlers.proxyUser.check!({}, { name: "ok", limits: { monthlyGb: "2.5" } })).toEqual({
      inputs: { name: "ok", limits: { dailyGb: null, monthlyGb: 2.5 }, enabled: true },
    });
  });
});

describe("check through the engine", () => {
  let declare: () => void = () => undefined;
  let fixture: ProviderFixture;
  beforeAll(async () => {
    fixture = await providerFixture(async () => declare());
  });
  afterAll(() => fixture?.cleanup());

  it.each([
    [
      "ProxyUser",
      () => new ProxyUser("bad-user", { name: "Bad_Name", limits: { dailyGb: 50, monthlyGb: 10 } }),
      [
        /resource 'bad-user': property name .*must be 1-63 characters/,
        /limits.dailyGb \(50\) must not exceed limits.monthlyGb \(10\)/,
      ],
    ],
    [
      "ApiKey",
      () => new ApiKey("bad-key", { name: "k", scopes: ["usage:read", "usage:read"], graceHours: 200 }),
      [/scopes must not repeat a scope/, /graceHours must be at most 168 \(got 200\)/],
    ],
    [
      "IpAllocation",
      () => new IpAllocation("bad-ip", { product: "isp", country: "germany" }),
      [/country must be a lowercase two-letter country code \(got "germany"\)/],
    ],
    [
      "ApiKey that has expired",
      () => new ApiKey("expired-key", { name: "k", scopes: ["usage:read"], expiresAt: "2020-01-01T00:00:00Z" }),
      [/resource 'expired-key': property expiresAt .*must be in the future/],
    ],
  ] as const)("fails the preview of a %s with every reason, before any API call", async (_kind, resource, reasons) => {
    declare = resource;
    fixture.server.resetStats();
    const error = await fixture.stack.preview().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeDefined();
    for (const reason of reasons) expect(String(error)).toMatch(reason);
    // The engine prints a failure's value from the input it names; a nested path used to read {<nil>}.
    expect(String(error)).not.toContain("<nil>");
    expect(fixture.server.stats().requests).toBe(0);
  });
});
