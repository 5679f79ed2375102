import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Adoption } from "../../provider/core/adoption";
import { createOnce, type Keyed, rotateOnce } from "../../provider/core/exactlyOnce";
import { type Identity, identityDigest, operationKey, successor } from "../../provider/core/idempotency";
import { isNotFound, ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";

const base: Identity = {
  organization: "organization",
  project: "shop",
  stack: "dev",
  type: "proxy:ApiKey",
  name: "ci",
  parents: [],
};

describe("deterministic idempotency keys", () => {
  it("derive from the stack, the resource and the generation, and nothing else", () => {
    const identity = identityDigest(base);
    expect(identityDigest({ ...base })).toBe(identity);
    const variants: Partial<Identity>[] = [
      { organization: "acme" },
      { project: "other" },
      { stack: "prod" },
      { type: "proxy:ProxyUser" },
      { name: "cd" },
      { parents: ["my:Component::team"] },
    ];
    const digests = variants.map((change) => identityDigest({ ...base, ...change }));
    expect(new Set([identity, ...digests]).size).toBe(variants.length + 1);

    const key = operationKey(identity, "create", ["ci", ["usage:read"], undefined]);
    expect(key).toBe(operationKey(identity, "create", ["ci", ["usage:read"], null]));
    expect(key?.length).toBeLessThanOrEqual(255);
    expect(operationKey(identity, "create", [{ b: 1, a: 2 }])).toBe(operationKey(identity, "create", [{ a: 2, b: 1 }]));
    const others = [
      operationKey(identity, "rotate", ["ci", ["usage:read"], undefined]),
      operationKey(identity, "create", ["ci", ["usage:read", "keys:write"], undefined]),
      operationKey(identityDigest({ ...base, stack: "prod" }), "create", ["ci", ["usage:read"], undefined]),
      operationKey(identity, "create", successor(["ci", ["usage:read"], undefined], "key_gone")),
    ];
    expect(new Set([key, ...others]).size).toBe(others.length + 1);
    expect(operationKey(undefined, "create", [])).toBeUndefined();
  });
});

describe("writes checked after a replay", () => {
  let server: ReferenceServer;
  let client: ProxyClient;
  beforeAll(async () => {
    server = await startReferenceServer();
    client = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
  });
  afterAll(() => server.close());

  const keyed = { identity: identityDigest(base), generation: ["ci"], label: 'ApiKey "ci"' };
  /** Ids read back after a create: a fresh answer needs none, a replay one. */
  const readBacks: string[] = [];
  const createKey = () =>
    createOnce(
      keyed,
      (request) => client.keys.create({ name: "ci", scopes: ["usage:read"] }, request),
      async (id) => {
        readBacks.push(id);
        try {
          return await client.keys.get(id);
        } catch (error) {
          if (isNotFound(error)) return undefined;
          throw error;
        }
      },
    );

  it("a create sent again replays the same object with its secret; once the object is gone it creates afresh", async () => {
    readBacks.length = 0;
    const first = await createKey();
    // The fresh answer is the object as the API holds it: no request reads it again.
    expect(readBacks).toEqual([]);
    expect(first.current).toBe(first.created);
    const again = await createKey();
    expect(again.created.id).toBe(first.created.id);
    expect(again.created.secret).toBe(first.created.secret);
    // A replay may describe an object changed or gone since: it is read as it is now.
    expect(readBacks).toEqual([first.created.id]);
    expect(again.current).not.toBe(again.created);

    await client.keys.revoke(first.created.id);
    const redeclared = await createKey();
    expect(redeclared.created.id).not.toBe(first.created.id);
    expect(redeclared.current.secret_hint).toBe(redeclared.created.secret.slice(-4));
    // Deterministic too: the next run finds the same fresh object.
    expect((await createKey()).created.id).toBe(redeclared.created.id);
    const held = (server.control.snapshot().keys as { name: string }[]).filter((key) => key.name === "ci");
    expect(held).toHaveLength(1);
  });

  it("a rotation replayed after the secret was rotated again rotates anew, to a secret that works", async () => {
    const { created } = await createKey();
    const rotation = { ...keyed, generation: [created.id, "r2"] };
    const rotate = () =>
      rotateOnce(
        rotation,
        (idempotencyKey) =>
          client.keys.rotate(created.id, { grace_hours: 0 }, idempotencyKey ? { idempotencyKey } : {}),
        () => client.keys.get(created.id),
      ).then(({ rotated }) => rotated);
    const first = await rotate();
    expect((await rotate()).secret).toBe(first.secret);
    await client.keys.rotate(created.id, { grace_hours: 0 }); // out of band
    const repaired = await rotate();
    expect(repaired.secret).not.toBe(first.secret);
    expect((await client.keys.get(created.id)).secret_hint).toBe(repaired.secret.slice(-4));
  });

  it("a create whose earlier answer only a rotated secret could read: created afresh where no second object can come of it, otherwise recover is asked for", async () => {
    const keyed = {
      identity: identityDigest({ ...base, name: "rotated" }),
      generation: ["rotated"],
      label: 'ApiKey "rotated"',
    };
    const createWith = (api: ProxyClient, extra: Partial<Keyed> = {}) =>
      createOnce(
        { ...keyed, ...extra },
        (request) => api.keys.create({ name: "rotated", scopes: ["usage:read"] }, request),
        (id) => api.keys.get(id),
      );
    const first = await createWith(client);
    const root = (server.control.snapshot().keys as { id: string; secret_hint: string }[]).find(
      (key) => key.secret_hint === server.rootKey.slice(-4),
    );
    if (!root) throw new Error("the reference server's root key is not in its snapshot");
    // The old secret keeps working for the hour of grace: the test's client still reads with it.
    const { secret } = await client.keys.rotate(root.id, { grace_hours: 1 });
    const rotated = new ProxyClient({ baseUrl: server.url, apiKey: secret });

    // Keys may share a name: the earlier key may be a killed run's, so only recover may create again.
    await expect(createWith(rotated)).rejects.toThrow(/pulumi-proxy recover --stack <stack> --up/);
    const named = () => (server.control.snapshot().keys as { name: string }[]).filter((key) => key.name === "rotated");
    expect(named()).toHaveLength(1);

    // In recover's run every object a killed run left is taken over before any create.
    const recovering = () => ({
      adoption: new Adoption({ since: new Date().toISOString(), held: [first.created.id] }),
    });
    const afresh = await createWith(rotated, recovering());
    expect(afresh.created.id).not.toBe(first.created.id);
    expect(named()).toHaveLength(2);
    // Deterministic too: sent again, it replays what the first try created.
    expect((await createWith(rotated, recovering())).created.id).toBe(afresh.created.id);
    expect(named()).toHaveLength(2);
  });
});
