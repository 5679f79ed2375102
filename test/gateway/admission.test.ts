import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../server";
import { basic, type GatewayFixture, gatewayFixture, type ProxiedAnswer, viaGateway } from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function expectRefusal(answer: ProxiedAnswer, status: number, reason: string): void {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers["x-proxy-error"]).toBe(reason);
  expect(JSON.parse(answer.body)).toMatchObject({
    error: { code: reason, request_id: expect.stringMatching(/^req_/) },
  });
  if (status === 407) expect(answer.headers["proxy-authenticate"]).toBe('Basic realm="proxy"');
}

describe("gateway admission", () => {
  it("answers 407 invalid_credentials to missing, malformed and wrong credentials", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server } = fixture;
    const target = `${origin.url}/hello`;
    const attempts: (string | undefined)[] = [
      undefined,
      "Bearer something",
      "Basic not*base64",
      `Basic ${Buffer.from("no-colon-here").toString("base64")}`,
      basic(user.username, `${user.password}x`),
      basic("nobody", user.password),
    ];
    for (const credentials of attempts)
      expectRefusal(await viaGateway(server.gatewayUrl, target, credentials), 407, "invalid_credentials");
    expect(origin.seen).toEqual([]);
    expect((await viaGateway(server.gatewayUrl, target, basic(user.username, user.password))).status).toBe(200);
  });

  it("answers 407 proxy_user_disabled once the user is disabled, and serves it again once re-enabled", async () => {
    fixture = await gatewayFixture();
    const { origin, user, server, api } = fixture;
    const auth = basic(user.username, user.password);
    await api.proxyUsers.disable(user.id);
    expectRefusal(await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth), 407, "proxy_user_disabled");
    await api.proxyUsers.update(user.id, { enabled: true });
    expect((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth)).status).toBe(200);
  });

  it("answers 407 traffic_limit_reached at the daily ceiling, then at the monthly one, by the server's UTC clock", async () => {
    const clock = new ManualClock(Date.UTC(2025, 2, 10, 12));
    // 1 MB a day, 2 MB a month: a download just under 1 MB, then one that crosses, fills a day.
    fixture = await gatewayFixture({ clock }, { daily_gb: 0.001, monthly_gb: 0.002 });
    const { origin, user, server } = fixture;
    const auth = basic(user.username, user.password);
    const hello = () => viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth);
    const fillDay = async (under: number) => {
      expect((await viaGateway(server.gatewayUrl, `${origin.url}/bytes/${under}`, auth)).status).toBe(200);
      // Crossing the ceiling cuts the download: the client sees its connection end.
      await expect(viaGateway(server.gatewayUrl, `${origin.url}/bytes/100000`, auth)).rejects.toThrow();
    };
    await fillDay(990_000);
    const daily = await hello();
    expectRefusal(daily, 407, "traffic_limit_reached");
    expect(JSON.parse(daily.body).error.message).toMatch(/daily ceiling of 0\.001 GB for 2025-03-10/);

    clock.set(Date.UTC(2025, 2, 11, 0, 0, 1));
    // The month has a little less than 1 MB left (the first day went past its ceiling by the cut's margin).
    await fillDay(900_000);
    clock.set(Date.UTC(2025, 2, 12, 9));
    // A new day, but the month's 2 MB are spent.
    const monthly = await hello();
    expectRefusal(monthly, 407, "traffic_limit_reached");
    expect(JSON.parse(monthly.body).error.message).toMatch(/monthly ceiling of 0\.002 GB for 2025-03/);
    clock.set(Date.UTC(2025, 3, 1, 0, 0, 1));
    expect((await hello()).status).toBe(200);
  });

  it("answers 429 with retry-after past its own per-user rate limit, apart from the API's", async () => {
    const clock = new ManualClock(Date.UTC(2025, 2, 10, 12));
    fixture = await gatewayFixture({ clock, rateLimitPerMinute: 3, gateway: { requestsPerSecond: 5 } });
    const { origin, user, server, api } = fixture;
    const auth = basic(user.username, user.password);
    const other = await api.proxyUsers.create({ name: "other" });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth);
    expectRefusal(limited, 429, "rate_limited");
    expect(limited.headers["retry-after"]).toBe("1");
    // Another proxy user has its own budget.
    expect((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, basic("other", other.password))).status).toBe(
      200,
    );
    clock.advance(1000);
    expect((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth)).status).toBe(200);
    server.gateway.setRateLimit(1);
    clock.advance(1000);
    expect((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth)).status).toBe(200);
    expect((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth)).status).toBe(429);
  });

  it("never shows the password in any answer, in the server's log, or to the target", async () => {
    const clock = new ManualClock(Date.UTC(2025, 2, 10, 12));
    fixture = await gatewayFixture({ clock, gateway: { requestsPerSecond: 3 } });
    const { origin, user, server, api, logLines } = fixture;
    const right = basic(user.username, user.password);
    const wrongPassword = `${user.password.slice(0, -3)}zzz`;
    const answers: ProxiedAnswer[] = [];
    const send = async (target: string, credentials: string) =>
      answers.push(await viaGateway(server.gatewayUrl, target, credentials));
    await send(`${origin.url}/hello`, right);
    await send(`${origin.url}/echo`, right);
    await send(`${origin.url}/hello`, basic(user.username, wrongPassword));
    await send("http://192.0.2.1/", right);
    await send(`${origin.url}/hello`, right);
    clock.advance(1000);
    await api.proxyUsers.disable(user.id);
    await send(`${origin.url}/hello`, right);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 407, 403, 429, 407]);

    const everything = [
      ...answers.map((answer) => JSON.stringify(answer)),
      ...logLines,
      ...origin.seen.map((seen) => JSON.stringify(seen)),
    ].join("\n");
    expect(logLines.some((line) => line.includes("gateway"))).toBe(true);
    for (const secret of [user.password, wrongPassword, right.slice("Basic ".length)]) {
      expect(everything).not.toContain(secret);
    }
  });
});
