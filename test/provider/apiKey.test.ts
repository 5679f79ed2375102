import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKey } from "../../provider";
import { driftedResources, type ProviderFixture, providerFixture } from "../support/fixture";
import { exportedStateAsUserSeesIt } from "../support/pulumi";

describe("ApiKey through the engine", () => {
  let args: ConstructorParameters<typeof ApiKey>[1] = { name: "ci-usage", scopes: ["usage:read"] };
  let fixture: ProviderFixture;
  const requests: string[] = [];

  beforeAll(async () => {
    fixture = await providerFixture(
      async () => {
        const key = new ApiKey("ci", args);
        return {
          id: key.id,
          secret: key.secret,
          hint: key.secretHint,
          previousSecretExpiresAt: key.previousSecretExpiresAt,
        };
      },
      { log: (line) => requests.push(line) },
    );
  });
  afterAll(() => fixture?.cleanup());

  it("keeps the secret out of state exports and CLI output, rotates in place, and replaces create-first", async () => {
    const { stack, api } = fixture;
    const output: string[] = [];
    const onOutput = (line: string) => output.push(line);

    const created = await stack.up({ onOutput });
    const firstId = created.outputs.id?.value as string;
    const firstSecret = created.outputs.secret?.value as string;
    expect(created.outputs.secret?.secret).toBe(true);
    expect(firstSecret).toMatch(/^live_[A-Za-z0-9]{32,}$/);
    expect(firstSecret.endsWith(created.outputs.hint?.value as string)).toBe(true);

    const exported = await exportedStateAsUserSeesIt(fixture);
    expect(exported).not.toContain(firstSecret);
    expect(exported).toContain(firstId);
    expect((await stack.preview({ onOutput })).changeSummary).toEqual({ same: 2 });

    // Rotation: same key, new secret, and the old one keeps working for the grace period.
    args = { ...args, rotationTrigger: "2026-11", graceHours: 2 };
    const rotated = await stack.up({ onOutput });
    expect(rotated.summary.resourceChanges).toMatchObject({ update: 1 });
    expect(rotated.outputs.id?.value).toBe(firstId);
    const secondSecret = rotated.outputs.secret?.value as string;
    expect(secondSecret).not.toBe(firstSecret);
    expect(Date.parse(rotated.outputs.previousSecretExpiresAt?.value as string)).toBeGreaterThan(
      Date.now() + 60 * 60_000,
    );
    expect(await exportedStateAsUserSeesIt(fixture)).not.toContain(secondSecret);

    // A scope change replaces the key: the new one exists before the old one is revoked.
    args = { ...args, scopes: ["usage:read", "proxy-users:read"] };
    requests.length = 0;
    const replaced = await stack.up({ onOutput });
    expect(replaced.summary.resourceChanges).toMatchObject({ replace: 1 });
    const keyWrites = requests
      .map((line) => line.split(" ").slice(1, 3).join(" "))
      .filter((call) => /^(POST|DELETE) \/v1\/keys/.test(call));
    expect(keyWrites).toEqual(["POST /v1/keys", `DELETE /v1/keys/${firstId}`]);
    const secondId = replaced.outputs.id?.value as string;
    expect(secondId).not.toBe(firstId);
    await expect(api.keys.get(firstId)).rejects.toMatchObject({ status: 404 });
    expect((await api.keys.get(secondId)).scopes.sort()).toEqual(["proxy-users:read", "usage:read"]);

    // Revoked out of band: a refresh drops it, and up creates a fresh key.
    await api.keys.revoke(secondId);
    expect(await driftedResources(fixture)).toEqual(new Map([["ci", ["deleted"]]]));
    const recreated = await stack.up({ refresh: true, onOutput });
    expect(recreated.outputs.id?.value).not.toBe(secondId);
    expect((await stack.preview({ refresh: true })).changeSummary).toEqual({ same: 2 });

    const allSecrets = [
      firstSecret,
      secondSecret,
      replaced.outputs.secret?.value as string,
      recreated.outputs.secret?.value as string,
    ];
    const transcript = output.join("");
    expect(transcript.length).toBeGreaterThan(0);
    const finalState = await exportedStateAsUserSeesIt(fixture);
    for (const secret of allSecrets) {
      expect(transcript).not.toContain(secret);
      expect(finalState).not.toContain(secret);
    }

    await stack.destroy();
    const remaining = fixture.server.control.snapshot().keys.map((key) => (key as { id: string }).id);
    expect(remaining).toHaveLength(1);
    expect(remaining).not.toContain(recreated.outputs.id?.value);
  });
});
