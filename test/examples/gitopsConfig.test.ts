import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PermissionDeniedError, ProxyClient } from "../../sdk";
import { basic, startOrigin, viaGateway } from "../gateway/harness";
import { type ExampleFixture, exampleFixture, exists, expectNothingLeft, stackFileOf } from "./harness";

type Output = { value: unknown; secret: boolean };
const value = <T>(outputs: Record<string, Output>, key: string) => outputs[key]?.value as T;
/** As examples.test.ts: tsc type-checks the example; these runs skip ts-node's check. */
const TRANSPILE_ONLY = { PULUMI_NODEJS_TRANSPILE_ONLY: "true" };

/** One stack for both tests: the second edits the config the first one's stack came up with. */
let fixture: ExampleFixture;
let up: Awaited<ReturnType<ExampleFixture["stack"]["up"]>>;
beforeAll(async () => {
  fixture = await exampleFixture("gitops", {}, TRANSPILE_ONLY, { gateway: { propagationDelayMs: 0 } });
  up = await fixture.stack.up();
});
afterAll(async () => {
  if (!fixture) return;
  const stackFile = stackFileOf(fixture);
  await fixture.cleanup();
  expect(exists(stackFile), "cleanup leaves no stack file in the example folder").toBe(false);
});

describe("gitops: what the stack hands out, and what its config may say", () => {
  it("exports each key's secret and each gateway login as secret outputs, and they work", async () => {
    const { server } = fixture;
    expect(up.outputs.keySecrets?.secret).toBe(true);
    expect(up.outputs.gatewayLogins?.secret).toBe(true);

    const keySecrets = value<Record<string, string>>(up.outputs, "keySecrets");
    expect(Object.keys(keySecrets)).toEqual(["usage-reports"]);
    const reports = new ProxyClient({ baseUrl: server.url, apiKey: keySecrets["usage-reports"] ?? "", maxRetries: 0 });
    await expect(reports.usage.get({ from: "2026-01-01", to: "2026-01-31" })).resolves.toHaveProperty("totals");
    await expect(reports.proxyUsers.list().all()).rejects.toBeInstanceOf(PermissionDeniedError);

    const logins = value<Record<string, { username: string; password: string }>>(up.outputs, "gatewayLogins");
    expect(Object.keys(logins).sort()).toEqual(["crawler", "monitor"]);
    expect(logins.crawler?.username).toBe("team-crawler");
    const origin = await startOrigin();
    try {
      const crawler = logins.crawler ?? { username: "", password: "" };
      const answer = await viaGateway(
        server.gatewayUrl,
        `${origin.url}/hello`,
        basic(crawler.username, crawler.password),
      );
      expect(answer).toMatchObject({ status: 200, body: "hello" });
    } finally {
      await origin.close();
    }
  });

  it("an address's keepCity reaches the allocation; a field the program does not know fails the preview by name", async () => {
    const { stack } = fixture;
    const edge = (extra: Record<string, unknown>) => ({
      value: JSON.stringify({ edge: { product: "isp", country: "us", city: "new york", ...extra } }),
    });
    await stack.setConfig("gitops:addresses", edge({ keepCity: true }));
    await stack.up();
    const { deployment } = await stack.exportStack();
    const allocation = deployment.resources.find((resource: { urn: string }) => resource.urn.endsWith("::edge"));
    expect(allocation?.inputs?.keepCity).toBe(true);

    await stack.setConfig("gitops:addresses", edge({ keepCity: true, keepcity: false }));
    await expect(stack.preview()).rejects.toThrow(
      /gitops:addresses: entry "edge" has the field "keepcity".*fields of addresses are product, country, city, keepCity, .*pulumi config rm --path 'addresses\.edge\.keepcity'/s,
    );
    await stack.destroy();
    expectNothingLeft(fixture);
  });
});
