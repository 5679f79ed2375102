import { ProxyAgent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyUser } from "../../provider";
import { basic, type Origin, startOrigin, viaGateway } from "../gateway/harness";
import { type ProviderFixture, providerFixture } from "../support/fixture";

/**
 * What a stack declares, seen on real proxy traffic: the password output opens the gateway, and
 * `enabled` and `dailyGb` in the program close it again after the server's default 2 s propagation.
 */
describe("a ProxyUser's settings reach the gateway", () => {
  const declared = { enabled: true, dailyGb: 5 };
  let fixture: ProviderFixture;
  let origin: Origin;

  beforeAll(async () => {
    origin = await startOrigin();
    fixture = await providerFixture(async () => {
      const user = new ProxyUser("scraper", {
        name: "scraper",
        enabled: declared.enabled,
        limits: { dailyGb: declared.dailyGb, monthlyGb: 100 },
      });
      return { username: user.username, password: user.password };
    });
  });
  afterAll(async () => {
    await fixture?.cleanup();
    await origin?.close();
  });

  it("opens with the password output, closes on enabled: false and on a lowered dailyGb, reopens when raised", async () => {
    const { stack, server } = fixture;
    const up = await stack.up();
    const credentials = basic(up.outputs.username?.value as string, up.outputs.password?.value as string);
    const verdict = async (): Promise<string> => {
      const answer = await viaGateway(server.gatewayUrl, `${origin.url}/hello`, credentials);
      return answer.status === 200 ? "200" : `${answer.status} ${answer.headers["x-proxy-error"]}`;
    };
    // 1.5 MB today, so that a ceiling of 0.001 GB (1 MB) is already exceeded later.
    const download = await viaGateway(server.gatewayUrl, `${origin.url}/bytes/1500000`, credentials);
    expect(download.status).toBe(200);
    expect(download.body).toHaveLength(1_500_000);

    const agent = new ProxyAgent({ uri: server.gatewayUrl, token: credentials, proxyTunnel: false });
    try {
      const inFlight = await request(`${origin.url}/slow`, { dispatcher: agent });
      declared.enabled = false;
      await stack.up();
      // The default delay is 2 s on the server's clock; the poll's limit only keeps a stuck run from hanging.
      await expect.poll(verdict, { timeout: 30_000, interval: 100 }).toBe("407 proxy_user_disabled");
      origin.releaseSlow();
      expect(inFlight.statusCode).toBe(200);
      expect(await inFlight.body.text()).toBe("started;finished");
    } finally {
      await agent.close();
    }

    declared.enabled = true;
    declared.dailyGb = 0.001;
    await stack.up();
    await expect.poll(verdict, { timeout: 30_000, interval: 100 }).toBe("407 traffic_limit_reached");

    declared.dailyGb = 5;
    await stack.up();
    await expect.poll(verdict, { timeout: 30_000, interval: 100 }).toBe("200");
  });
});
