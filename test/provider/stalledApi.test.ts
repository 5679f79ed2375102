import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IpAllocation } from "../../provider";
import { type ProviderFixture, providerFixture } from "../support/fixture";

/**
 * An API that takes a write and then stops answering (the reference server's "hold" fault commits
 * the write and parks its reply): the error says the write may have landed and that the next up
 * finishes it safely, and the next up does, with no second object and no second charge.
 */
describe("a write the API took but never answered", () => {
  let fixture: ProviderFixture;
  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const ip = new IpAllocation("stalled", { product: "isp", country: "de" });
      return { id: ip.id };
    });
  });
  afterAll(() => fixture?.cleanup());

  it("says it may have landed, and the next up finishes it once", async () => {
    const { stack, server, api } = fixture;
    // A timed-out write is retried under its idempotency key while the retry window lasts (the SDK's
    // resilience test shows the replay); with no window left, the API stays silent to the provider.
    await stack.setAllConfig({
      "proxy:retryWindowSeconds": { value: "0" },
      "proxy:requestTimeoutSeconds": { value: "2" },
    });
    server.injectFault({ method: "POST", path: "/v1/ips", kind: "hold", count: 1 });
    const failure = await stack.up().then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure, "the up must fail while the API does not answer").toBeDefined();
    expect(String(failure?.message)).toMatch(
      /the API took the write but did not answer \(POST \/v1\/ips: no answer within 2000 ms/,
    );
    expect(String(failure?.message)).toContain("so it may have landed. Run `pulumi up` again once the API answers");
    // It did land: the allocation exists and was charged, though the state does not know it yet.
    expect(server.control.snapshot().ips).toHaveLength(1);
    server.releaseHeldReplies();
    await stack.removeAllConfig(["proxy:retryWindowSeconds", "proxy:requestTimeoutSeconds"]);

    const again = await stack.up();
    expect(again.summary.resourceChanges).toMatchObject({ create: 1 });
    expect(server.control.snapshot().ips).toHaveLength(1);
    const charges = [];
    for await (const charge of api.billing.charges()) charges.push(charge);
    expect(charges.filter((charge) => charge.kind === "ip_allocation")).toHaveLength(1);
    await stack.destroy();
  });
});
