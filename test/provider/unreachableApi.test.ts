import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyUser } from "../../provider";
import { type ProviderFixture, providerFixture } from "../support/fixture";

/** A port on loopback where nothing listens: a server bound to it and closed again. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("a proxy:apiUrl that nothing answers", () => {
  let fixture: ProviderFixture;
  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const user = new ProxyUser("steady", { name: "steady" });
      return { id: user.id };
    });
  });
  afterAll(() => fixture?.cleanup());

  it("fails the up that would record it, naming the setting; a preview still costs no request", async () => {
    const { stack, server } = fixture;
    await stack.up();
    const goodUrl = server.url;
    const deadUrl = `http://127.0.0.1:${await deadPort()}`;
    await stack.setConfig("proxy:apiUrl", { value: deadUrl });
    await stack.setConfig("proxy:retryWindowSeconds", { value: "2" });

    server.resetStats();
    expect((await stack.preview()).changeSummary).toEqual({ same: 2 });
    expect(server.stats().requests).toBe(0);

    const started = Date.now();
    const failure = await stack.up().then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure, "an up against a dead API must fail").toBeDefined();
    expect(String(failure?.message)).toMatch(/cannot reach the API at http:\/\/127\.0\.0\.1:\d+ \(proxy:apiUrl\)/);
    expect(String(failure?.message)).toContain("proxy:retryWindowSeconds");
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(String(failure?.message)).toContain(deadUrl);

    await stack.setConfig("proxy:apiUrl", { value: goodUrl });
    expect((await stack.up()).summary.resourceChanges).toEqual({ same: 2 });
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 2 });
    await stack.destroy();
  });
});
