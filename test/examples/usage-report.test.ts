import { afterEach, describe, expect, it } from "vitest";
import { basic, startOrigin, viaGateway } from "../gateway/harness";
import { type ExampleFixture, exampleFixture } from "./harness";

type Outputs = Record<string, { value: unknown; secret: boolean }>;

let fixture: ExampleFixture | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

/** Real traffic through the reference gateway: `count` requests of `/hello` by the given proxy user. */
async function traffic(f: ExampleFixture, user: { username: string; password: string }, count: number): Promise<void> {
  const origin = await startOrigin();
  try {
    for (let i = 0; i < count; i++) {
      const answer = await viaGateway(f.server.gatewayUrl, `${origin.url}/hello`, basic(user.username, user.password));
      expect(answer.status).toBe(200);
    }
  } finally {
    await origin.close();
  }
}

describe("usage-report example: reads inside a program, exported as stack outputs", () => {
  it("reports this month's gateway traffic, balance and charges, for the account and for one proxy user", async () => {
    const month = new Date().toISOString().slice(0, 7);
    fixture = await exampleFixture(
      "usage-report",
      { "usage-report:month": month },
      { PULUMI_NODEJS_TRANSPILE_ONLY: "true" },
    );
    const { stack, api } = fixture;
    const crawler = await api.proxyUsers.create({ name: "crawler" });
    const monitor = await api.proxyUsers.create({ name: "monitor" });
    await traffic(fixture, crawler, 3);
    await traffic(fixture, monitor, 2);
    await api.ips.allocate({ product: "isp", country: "us" });
    const today = new Date().toISOString().slice(0, 10);
    const expected = await api.usage.get({ from: today, to: today });
    const perUser = Object.fromEntries(
      expected.usage.map((row) => [row.proxy_user_id, { bytes: row.bytes, requests: row.requests }]),
    );

    const whole = (await stack.up()).outputs as Outputs;
    expect(whole.scope?.value).toBe("all proxy users");
    expect(whole.totals?.value).toEqual(expected.totals);
    expect(whole.totals?.secret, "the API key's secretness does not taint the results").toBe(false);
    expect(whole.byProxyUser?.value).toEqual(perUser);
    expect(whole.busiestDay?.value).toEqual({ day: today, bytes: expected.totals.bytes });
    expect(whole.balance?.value).toEqual({ balanceCents: 10_000 - 300, currency: "usd" });
    expect(whole.charges?.value).toEqual({ count: 1, totalCents: 300, byKind: { ip_allocation: 300 } });

    await stack.setConfig("usage-report:proxyUser", { value: "monitor" });
    const scoped = (await stack.up()).outputs as Outputs;
    expect(scoped.scope?.value).toBe("monitor");
    expect(scoped.totals?.value).toEqual(perUser[monitor.id]);
    expect(Object.keys(scoped.byProxyUser?.value as object)).toEqual([monitor.id]);
  });
});
