import type * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyUser } from "../../provider";
import { IDENTITY_INPUT, identityDigest } from "../../provider/core/idempotency";
import { configure, handlers } from "../../provider/runtime";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { type ProviderFixture, providerFixture } from "../support/fixture";

/**
 * Issue 44, item 1: a dev stack torn down and brought back the same day. The first create's key
 * held only the name, so a user whose limits had changed since was created again under that key with
 * another body, and the API refused it (409 `idempotency_key_reused`): the `up` failed, as if a run
 * had been interrupted. Now the key holds the whole request, any inputs come back any number of
 * times a day, and a rotated proxy:apiKey (which cannot read the first answer) does not block either.
 */

const NAME = "s5-crawler";

describe("a proxy user destroyed and declared again the same day", () => {
  let declared = { limits: { dailyGb: 1, monthlyGb: 10 }, enabled: true };
  let fixture: ProviderFixture;

  beforeAll(async () => {
    fixture = await providerFixture(async () => {
      const user = new ProxyUser("crawler", { name: NAME, ...declared });
      return { id: user.id, password: user.password };
    });
  });
  afterAll(() => fixture?.cleanup());

  const usersNamed = () =>
    (fixture.server.control.snapshot().proxyUsers as { id: string; name: string }[]).filter(
      (user) => user.name === NAME,
    );

  /** `up` from an empty stack: exactly one user of the name, as declared, with a fresh password in the state. */
  async function comesBack(limits: typeof declared.limits, enabled = true) {
    declared = { limits, enabled };
    const { outputs } = await fixture.stack.up();
    const id = outputs.id?.value as string;
    expect(usersNamed().map((user) => user.id)).toEqual([id]);
    expect(await fixture.api.proxyUsers.get(id)).toMatchObject({
      limits: { daily_gb: limits.dailyGb, monthly_gb: limits.monthlyGb },
      enabled,
    });
    expect(outputs.password?.value).toEqual(expect.any(String));
    expect((await fixture.stack.preview()).changeSummary).toEqual({ same: 2 });
    return id;
  }

  it("comes back after a destroy with the limits changed in between, then again with others and with the first", async () => {
    const first = await comesBack({ dailyGb: 1, monthlyGb: 10 });
    declared = { ...declared, limits: { dailyGb: 2, monthlyGb: 20 } };
    expect((await fixture.stack.up()).summary.resourceChanges).toMatchObject({ update: 1 });
    await fixture.stack.destroy();
    expect(usersNamed()).toEqual([]);

    const again = await comesBack({ dailyGb: 2, monthlyGb: 20 });
    expect(again).not.toBe(first);
    const seen = new Set([first, again]);
    for (const [limits, enabled] of [
      [{ dailyGb: 3, monthlyGb: 30 }, false],
      [{ dailyGb: 1, monthlyGb: 10 }, true], // the first create's inputs: its replay names a gone user
    ] as const) {
      await fixture.stack.destroy();
      seen.add(await comesBack(limits, enabled));
    }
    // Each round's create is a new user under a new key; a fifth with the same inputs would repeat the fourth.
    expect(seen.size).toBe(4);
  });

  it("comes back after proxy:apiKey was rotated, which cannot read the earlier create's answer", async () => {
    const root = (fixture.server.control.snapshot().keys as { id: string; secret_hint: string }[]).find(
      (key) => key.secret_hint === fixture.server.rootKey.slice(-4),
    );
    if (!root) throw new Error("the reference server's root key is not in its snapshot");
    // The old secret keeps working for the hour of grace: the fixture's client still reads with it.
    const { secret } = await fixture.api.keys.rotate(root.id, { grace_hours: 1 });
    await fixture.stack.setConfig("proxy:apiKey", { value: secret, secret: true });
    await fixture.stack.destroy();
    await comesBack({ dailyGb: 1, monthlyGb: 10 });
    await fixture.stack.destroy();
    expect(usersNamed()).toEqual([]);
  });
});

/**
 * The other side of the same keys: a create whose answer never came back (the run was killed or
 * failed) is sent again. With the same inputs the API replays it, password included, as crash.test.ts
 * and skipCheckpoints.test.ts check through the engine; with other inputs the key is another one, and
 * the API's one user per name refuses a second user, with the fix.
 */
describe("a user created by a run that never heard back, declared again", () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    const config: Record<string, string> = { "proxy:apiUrl": server.url, "proxy:apiKey": server.rootKey };
    configure({ config: { get: (key: string) => config[key] } } as unknown as pulumi.dynamic.ConfigureRequest);
  });
  afterAll(() => server?.close());

  const identity = identityDigest({
    organization: "organization",
    project: "shop",
    stack: "dev",
    type: "proxy:ProxyUser",
    name: "crawler",
    parents: [],
  });
  async function declared(limits: { dailyGb: number; monthlyGb: number }) {
    const checked = await handlers.proxyUser.check({}, { name: "killed-run", limits, [IDENTITY_INPUT]: identity });
    if (!checked.inputs) throw new Error(`the inputs were refused: ${JSON.stringify(checked.failures)}`);
    return checked.inputs;
  }

  it("replays it with the same inputs, and with other limits is refused by its name, saying how to recover", async () => {
    const lost = await handlers.proxyUser.create(await declared({ dailyGb: 1, monthlyGb: 10 }));
    const replayed = await handlers.proxyUser.create(await declared({ dailyGb: 1, monthlyGb: 10 }));
    expect(replayed.id).toBe(lost.id);
    expect(replayed.outs.password).toBe(lost.outs.password);

    const refused = await handlers.proxyUser.create(await declared({ dailyGb: 2, monthlyGb: 20 })).then(
      () => "created a second time",
      (error: Error) => error.message,
    );
    expect(refused).toContain(
      'ProxyUser "killed-run": cannot create it: A proxy user named killed-run already exists.',
    );
    expect(refused).toContain(`created ${lost.id}: set the inputs back to what that run sent and run \`pulumi up\``);
    expect(refused).toContain("or, after a killed run, `pulumi-proxy recover --stack <stack> --up`");
    expect(refused).toContain(`set adoptId: "${lost.id}"`);
    const named = (server.control.snapshot().proxyUsers as { name: string }[]).filter((u) => u.name === "killed-run");
    expect(named).toHaveLength(1);
  });
});
