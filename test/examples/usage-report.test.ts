import { afterEach, describe, expect, it } from "vitest";
import { basic, startOrigin, viaGateway } from "../gateway/harness";
import { printedJson, type ReadmeExample, readmeExample } from "./readmeExample";

type Outputs = Record<string, { value: unknown; secret: boolean }>;

/** The month the README's `pulumi config set month 2025-03` reports: the server's clock stands in it. */
const README_MONTH_NOON = Date.parse("2025-03-15T12:00:00Z");
const README_DAY = "2025-03-15";

let readme: ReadmeExample | undefined;
afterEach(async () => {
  await readme?.cleanup();
  readme = undefined;
});

/** Real traffic through the reference gateway: `count` requests of `/hello` by the given proxy user. */
async function traffic(r: ReadmeExample, user: { username: string; password: string }, count: number): Promise<void> {
  const origin = await startOrigin();
  try {
    for (let i = 0; i < count; i++) {
      const answer = await viaGateway(r.server.gatewayUrl, `${origin.url}/hello`, basic(user.username, user.password));
      expect(answer.status).toBe(200);
    }
  } finally {
    await origin.close();
  }
}

describe("usage-report example: reads inside a program, exported as stack outputs", () => {
  it("reports the month's gateway traffic, balance and charges, for the account and for one proxy user", async () => {
    const started = Date.now();
    // The README's commands, in a copy of the example, against a server whose day is in their month.
    readme = await readmeExample("usage-report", { clock: { now: () => README_MONTH_NOON + Date.now() - started } });
    const { api } = readme;
    const crawler = await api.proxyUsers.create({ name: "crawler" });
    const monitor = await api.proxyUsers.create({ name: "monitor" });
    await traffic(readme, crawler, 3);
    await traffic(readme, monitor, 2);
    await api.ips.allocate({ product: "isp", country: "us" });
    const expected = await api.usage.get({ from: README_DAY, to: README_DAY });
    const perUser = Object.fromEntries(
      expected.usage.map((row) => [row.proxy_user_id, { bytes: row.bytes, requests: row.requests }]),
    );

    const printed = await readme.runBlock("pulumi login --local");
    expect(printedJson(printed), "what `pulumi stack output totals` printed").toEqual(expected.totals);
    const stack = await readme.stack();
    const whole = (await stack.outputs()) as Outputs;
    expect(whole.scope?.value).toBe("all proxy users");
    expect(whole.totals?.value).toEqual(expected.totals);
    expect(whole.totals?.secret, "the API key's secretness does not taint the results").toBe(false);
    expect(whole.byProxyUser?.value).toEqual(perUser);
    expect(whole.busiestDay?.value).toEqual({ day: README_DAY, bytes: expected.totals.bytes });
    expect(whole.balance?.value).toEqual({ balanceCents: 10_000 - 300, currency: "usd" });
    expect(whole.charges?.value).toEqual({ count: 1, totalCents: 300, byKind: { ip_allocation: 300 } });

    await stack.setConfig("usage-report:proxyUser", { value: "monitor" });
    const scoped = (await stack.up()).outputs as Outputs;
    expect(scoped.scope?.value).toBe("monitor");
    expect(scoped.totals?.value).toEqual(perUser[monitor.id]);
    expect(Object.keys(scoped.byProxyUser?.value as object)).toEqual([monitor.id]);
  });
});
