import type { PulumiFn } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKey, IpAllocation, ProxyUser } from "../../provider";
import { type ProviderFixture, providerFixture } from "../support/fixture";

/** What the user reads when a command fails: the engine's output and the error together. */
async function failureOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error("expected the command to fail");
}

describe("failures a user can act on", () => {
  let fixture: ProviderFixture;
  let program: PulumiFn = async () => ({});
  let takenId: string;

  beforeAll(async () => {
    fixture = await providerFixture(() => program());
    takenId = (await fixture.api.proxyUsers.create({ name: "taken" })).id;
  });
  afterAll(() => fixture?.cleanup());

  it("a name conflict names the existing object's id for adoptId", async () => {
    program = async () => {
      new ProxyUser("dup", { name: "taken" });
    };
    const message = await failureOf(() => fixture.stack.up());
    expect(message).toContain(`ProxyUser "taken": cannot create it`);
    expect(message).toContain(`adoptId: "${takenId}"`);
  });

  it("a scope escalation names the scopes the configured key cannot hand out", async () => {
    const narrow = await fixture.api.keys.create({ name: "narrow", scopes: ["keys:write", "usage:read"] });
    await fixture.stack.setConfig("proxy:apiKey", { value: narrow.secret, secret: true });
    program = async () => {
      new ApiKey("wide", { name: "wide", scopes: ["usage:read", "billing:read"] });
    };
    const message = await failureOf(() => fixture.stack.up());
    await fixture.stack.setConfig("proxy:apiKey", { value: fixture.server.rootKey, secret: true });
    expect(message).toContain(`ApiKey "wide": cannot create it: the new key would get billing:read`);
    expect(message).toContain("Use a key that holds billing:read, or remove billing:read from scopes.");
    expect(message).not.toContain("a scope it lacks");
  });

  it("an allocation that fails names the resource declared, not only the country it asked for", async () => {
    program = async () => {
      new IpAllocation("edge", { product: "isp", country: "de" });
    };
    fixture.server.control.setBalance(0);
    const message = await failureOf(() => fixture.stack.up());
    fixture.server.control.setBalance(1_000_000);
    expect(message).toContain(`IpAllocation "edge" (de): cannot create it`);
  });

  it("an adopted object deleted outside Pulumi suggests removing adoptId", async () => {
    program = async () => {
      new ProxyUser("legacy", { name: "taken", adoptId: takenId }, { retainOnDelete: true });
    };
    await fixture.stack.up();
    await fixture.api.proxyUsers.delete(takenId);
    const message = await failureOf(() => fixture.stack.up({ refresh: true }));
    expect(message).toContain(`ProxyUser "taken": cannot adopt ${takenId}`);
    expect(message).toContain("Remove adoptId to create a new one");
  });

  it("with the API down, a refresh says so in one line per resource, without a stack trace", async () => {
    program = async () => {
      new ProxyUser("alpha", { name: "alpha" });
      new ProxyUser("beta", { name: "beta" });
    };
    // The default is two minutes of retries; the message is the same after five seconds. A refresh
    // runs with the settings the last up recorded, as it does with the key.
    await fixture.stack.setConfig("proxy:retryWindowSeconds", { value: "5" });
    await fixture.stack.up({ refresh: true });
    await fixture.server.close();
    const message = await failureOf(() => fixture.stack.refresh());
    for (const name of ["alpha", "beta"]) {
      expect(message).toContain(`ProxyUser "${name}": cannot refresh it: the API did not answer`);
    }
    expect(message).toContain(
      "Check that proxy:apiUrl (or PROXY_API_URL) names the service and that it is up; proxy:retryWindowSeconds sets how long each request is tried first.",
    );
    expect(message).not.toMatch(/^\s+at .+\(.+:\d+:\d+\)$/m);
  });
});
