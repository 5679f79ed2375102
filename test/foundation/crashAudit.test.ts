import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditCrash, CLEAN_AUDIT } from "../../harness/crash/audit";
import type { Deployment, StateResource } from "../../harness/crash/cliStack";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";

/**
 * The crash oracle the kill tests trust: a state whose secrets do not work must fail it, and a
 * state that lost a secret output (a killed run that recorded the object but not its secret) as well.
 */
describe("the crash audit's secrets", () => {
  let server: ReferenceServer;
  let deployment: (outputs: { secret?: unknown; password?: unknown; dropped?: boolean }) => Deployment;

  beforeAll(async () => {
    server = await startReferenceServer();
    const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
    const user = await api.proxyUsers.create({ name: "audited", limits: { daily_gb: 1, monthly_gb: 10 } });
    const key = server.control.createKey({ name: "audited", scopes: ["usage:read"] });
    // As `pulumi stack export --show-secrets` shows a secret: its plaintext as JSON.
    const shown = (value: string) => ({
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      plaintext: JSON.stringify(value),
    });
    deployment = ({ secret = shown(key.secret), password = shown(user.password), dropped = false }) => {
      const resource = (type: string, id: string, outputs: Record<string, unknown>): StateResource => ({
        urn: `urn:pulumi:s::p::pulumi-nodejs:dynamic:Resource$proxy:${type}::audited`,
        type: `proxy:index:${type}`,
        id,
        outputs: dropped ? { name: outputs.name } : outputs,
      });
      return {
        resources: [
          resource("ProxyUser", user.id, { name: "audited", password }),
          resource("ApiKey", key.id, { name: "audited", secret }),
        ],
      };
    };
  });
  afterAll(() => server?.close());

  const intent = { allocations: 0, replacements: new Map<string, number>() };

  it("passes a state whose secrets are the current ones", async () => {
    expect(await auditCrash(server, deployment({}), intent)).toEqual(CLEAN_AUDIT);
  });

  it("fails a state whose secret is not the object's", async () => {
    const wrong = `live_${"x".repeat(32)}`;
    const audit = await auditCrash(server, deployment({ secret: wrong, password: "not-it" }), intent);
    expect(audit.deadSecrets.sort()).toEqual(["ApiKey audited", "ProxyUser audited"]);
  });

  it("fails a state that recorded the object and dropped its secret output", async () => {
    const audit = await auditCrash(server, deployment({ dropped: true }), intent);
    expect(audit.deadSecrets.sort()).toEqual([
      "ApiKey audited (no secret in state)",
      "ProxyUser audited (no secret in state)",
    ]);
  });
});
