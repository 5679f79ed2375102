import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyUser } from "../../provider";
import { type ProviderFixture, providerFixture } from "../support/fixture";
import { deadPort } from "../support/ports";

describe("a proxy:apiUrl that nothing answers", () => {
  let fixture: ProviderFixture;
  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const user = new ProxyUser("steady", { name: "steady" });
      return { id: user.id };
    });
  });
  afterAll(() => fixture?.cleanup());

  // Issue #32, item 3: a refused connection on the first request of a run used to be retried for the
  // whole retry window (two minutes by default), and a preview never asked at all.
  it("fails the preview within 15 s with the default settings, naming the URL and the fix", async () => {
    const { stack, server } = fixture;
    await stack.up();
    const goodUrl = server.url;
    const deadUrl = `http://127.0.0.1:${await deadPort()}`;
    await stack.setConfig("proxy:apiUrl", { value: deadUrl });

    const started = Date.now();
    const failure = await stack.preview().then(
      () => undefined,
      (error: Error) => error,
    );
    const elapsedMs = Date.now() - started;
    expect(failure, "a preview against a dead API must fail").toBeDefined();
    const message = String(failure?.message);
    expect(message).toContain(`cannot use the API at ${deadUrl} (proxy:apiUrl)`);
    expect(message).toContain("ECONNREFUSED");
    expect(message).toContain("pulumi config set proxy:apiUrl");
    expect(message).not.toContain(server.rootKey);
    expect(elapsedMs).toBeLessThan(15_000);

    await stack.setConfig("proxy:apiUrl", { value: goodUrl });
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 2 });
    await stack.destroy();
  });
});
