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
  // whole retry window (two minutes by default), and a preview never asked at all. The window here is
  // longer than the test may run: were the refusal retried, the preview would not fail in time. No
  // clock is read: on a loaded machine a duration says more about the load than about the provider.
  it("fails the preview at the first refused connection, not after the retry window, naming the URL and the fix", async () => {
    const { stack, server } = fixture;
    await stack.up();
    const goodUrl = server.url;
    const deadUrl = `http://127.0.0.1:${await deadPort()}`;
    await stack.setConfig("proxy:apiUrl", { value: deadUrl });
    await stack.setConfig("proxy:retryWindowSeconds", { value: "86400" });

    const failure = await stack.preview().then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure, "a preview against a dead API must fail").toBeDefined();
    const message = String(failure?.message);
    expect(message).toContain(`cannot use the API at ${deadUrl} (proxy:apiUrl)`);
    expect(message).toContain("ECONNREFUSED");
    expect(message).toContain("pulumi config set proxy:apiUrl");
    expect(message).not.toContain(server.rootKey);

    await stack.setConfig("proxy:apiUrl", { value: goodUrl });
    await stack.removeConfig("proxy:retryWindowSeconds");
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 2 });
  });
});
