import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyUser } from "../../provider";
import { type ProviderFixture, providerFixture } from "../support/fixture";
import { createTestStack, type TestStack } from "../support/pulumi";

/**
 * Stands in for an earlier release: different serialized provider code, and state that lacks the
 * fields later versions added (disabledOutOfBand, updatedAt, an explicit null ceiling).
 */
const earlierReleaseProvider: pulumi.dynamic.ResourceProvider = {
  async configure(req) {
    require("pulumi-proxy/runtime").configure(req);
  },
  async create(inputs) {
    const created = await require("pulumi-proxy/runtime").handlers.proxyUser.create({ ...inputs, enabled: true });
    const { disabledOutOfBand: _dropped, updatedAt: _alsoDropped, ...outs } = created.outs;
    // Earlier releases also stored the hidden identity among the outputs.
    return { id: created.id, outs: { ...outs, limits: { dailyGb: inputs.limits.dailyGb }, __identity: "id1_earlier" } };
  },
  async delete(id, props) {
    await require("pulumi-proxy/runtime").handlers.proxyUser.delete(id, props);
  },
};

class EarlierProxyUser extends pulumi.dynamic.Resource {
  constructor(name: string, args: { name: string; limits: { dailyGb: number } }) {
    super(
      earlierReleaseProvider,
      name,
      { ...args, proxyUserId: undefined, password: undefined },
      {},
      "proxy",
      "ProxyUser",
    );
  }
}

describe("state written by an earlier release", () => {
  let release: "earlier" | "current" = "earlier";
  let fixture: ProviderFixture;

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const args = { name: "veteran", limits: { dailyGb: 4 } };
      const user = release === "earlier" ? new EarlierProxyUser("veteran", args) : new ProxyUser("veteran", args);
      return { id: user.id };
    });
  });
  afterAll(() => fixture?.cleanup());

  it("is read by the current provider with no diff, and still refreshes, updates and deletes", async () => {
    const { stack, api } = fixture;
    const id = (await stack.up()).outputs.id?.value as string;
    const recorded = (await stack.exportStack()).deployment.resources.find((r: { type: string }) =>
      r.type.endsWith(":ProxyUser"),
    );
    expect(recorded.outputs).not.toHaveProperty("disabledOutOfBand");
    expect(recorded.outputs.limits).toEqual({ dailyGb: 4 });

    release = "current";
    expect((await stack.preview()).changeSummary).toEqual({ same: 2 });
    expect((await stack.up()).summary.resourceChanges).toEqual({ same: 2 });
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 2 });
    // A refresh keeps what the earlier release stored of the identity, so upgrading shows no drift.
    await stack.refresh();
    const refreshed = (await stack.exportStack()).deployment.resources.find((r: { type: string }) =>
      r.type.endsWith(":ProxyUser"),
    );
    expect(refreshed.outputs.__identity).toBe("id1_earlier");
    await stack.destroy();
    await expect(api.proxyUsers.get(id)).rejects.toMatchObject({ status: 404 });
  });
});

describe("missing credentials", () => {
  let harness: TestStack;
  beforeAll(async () => {
    harness = await createTestStack({
      program: async () => void new ProxyUser("orphan", { name: "orphan" }),
      envVars: { PROXY_API_URL: "", PROXY_API_KEY: "" },
    });
  });
  afterAll(() => harness?.cleanup());

  it("fail with the config keys and environment variables to set", async () => {
    await expect(harness.stack.up()).rejects.toThrow(
      /no API URL is configured. Run `pulumi config set proxy:apiUrl https:\/\/…` or set PROXY_API_URL/,
    );
  });
});
