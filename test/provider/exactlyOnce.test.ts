import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKey, ProxyUser } from "../../provider";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { driftedResources } from "../support/fixture";
import { createTestStack, type TestStack } from "../support/pulumi";

/**
 * Idempotency keys are derived from the stack and the resource, and every replay is checked:
 * one API key shared by two stacks never makes them share an object, a resource destroyed and
 * declared again within the API's 24 hours is created afresh, and a secret rotated outside the
 * stack is drift that the next `up` repairs.
 */

let server: ReferenceServer;
let api: ProxyClient;
const stacks: TestStack[] = [];

/** Key names may repeat on the API; proxy user names may not, so each stack names its user. */
const programFor = (tag: string) => async () => {
  const key = new ApiKey("ci", { name: "shared-name", scopes: ["usage:read"], graceHours: 0 });
  const user = new ProxyUser("scraper", { name: `scraper-${tag}` });
  return { keyId: key.id, secret: key.secret, userId: user.id };
};

async function stackOnServer(tag: string): Promise<TestStack> {
  const harness = await createTestStack({
    program: programFor(tag),
    config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
  });
  stacks.push(harness);
  return harness;
}

const keysNamed = (name: string) =>
  (server.control.snapshot().keys as { id: string; name: string }[]).filter((key) => key.name === name);

beforeAll(async () => {
  server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
  api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
});
afterAll(async () => {
  for (const harness of stacks) await harness.cleanup();
  await server?.close();
});

describe("deterministic keys through the engine", () => {
  it("two stacks with the same names on one API key get their own objects; a redeclared resource is created afresh", async () => {
    const [a, b] = [await stackOnServer("a"), await stackOnServer("b")];
    const first = (await a.stack.up()).outputs;
    const second = (await b.stack.up()).outputs;
    expect(second.keyId?.value).not.toBe(first.keyId?.value);
    expect(keysNamed("shared-name")).toHaveLength(2);

    // Destroyed, then declared again within 24 hours: the create's key is the same, its replay names
    // a revoked key, and the provider creates afresh instead of recording a dead id.
    await a.stack.destroy();
    const again = (await a.stack.up()).outputs;
    expect(again.keyId?.value).not.toBe(first.keyId?.value);
    const secret = again.secret?.value as string;
    const own = new ProxyClient({ baseUrl: server.url, apiKey: secret });
    expect((await own.keys.get(again.keyId?.value as string)).secret_hint).toBe(secret.slice(-4));
    expect(keysNamed("shared-name")).toHaveLength(2);
    expect((await a.stack.preview()).changeSummary).toEqual({ same: 3 });
  });

  it("a secret rotated outside the stack is drift, and the next up rotates to one the stack holds, saying why", async () => {
    const [a] = stacks as [TestStack];
    const before = (await a.stack.up()).outputs;
    const keyId = before.keyId?.value as string;
    await api.keys.rotate(keyId, { grace_hours: 0 }); // out of band: the stored secret is dead now

    const drift = await driftedResources(a);
    expect(drift.get("ci")).toEqual(expect.arrayContaining(["secretHint", "secretIsCurrent"]));

    await a.stack.refresh();
    let output = "";
    const repaired = await a.stack.up({ onOutput: (line) => (output += line) });
    expect(repaired.summary.resourceChanges).toMatchObject({ update: 1 });
    expect(output).toContain("is no longer the key's current secret");
    expect(output).not.toContain(before.secret?.value as string);
    const secret = repaired.outputs.secret?.value as string;
    expect(secret).not.toBe(before.secret?.value);
    const own = new ProxyClient({ baseUrl: server.url, apiKey: secret });
    expect((await own.keys.get(keyId)).secret_hint).toBe(secret.slice(-4));
    expect((await a.stack.preview({ refresh: true })).changeSummary).toEqual({ same: 3 });
  });
});
