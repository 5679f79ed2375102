import { afterEach, describe, expect, it } from "vitest";
import { basic, type GatewayFixture, gatewayFixture, viaGateway } from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe("the server's logs", () => {
  it("never carry a password or key sent in a path or query, to the API or through the gateway", async () => {
    fixture = await gatewayFixture();
    const { server, user, origin, logLines } = fixture;
    const other = await fixture.api.proxyUsers.create({ name: "other" });
    const secrets = [user.password, other.password, server.rootKey];
    const api = (path: string) =>
      fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.rootKey}` } });
    const paths = [
      `/v1/proxy-users/${user.password}`,
      `/v1/${user.password}/proxy-users`,
      `/v1/proxy-users/${other.id}/${other.password}`,
      `/v1/proxy-users?cursor=${user.password}&limit=5`,
      `/v1/proxy-users?password=${other.password}`,
      `/v1/usage?from=2025-01-01&to=2025-01-02&proxy_user_id=${user.password}`,
      `/v1/keys/${server.rootKey}`,
      `/${encodeURIComponent(`${user.username}:${user.password}`)}`,
    ];
    for (const path of paths) await (await api(path)).arrayBuffer();
    await (await api(`/v1/proxy-users/${other.id}`)).arrayBuffer();
    const auth = basic(user.username, user.password);
    await viaGateway(server.gatewayUrl, `${origin.url}/hello/${user.password}?password=${user.password}`, auth);
    await viaGateway(server.gatewayUrl, `${origin.url}/hello`, basic(user.username, other.password));

    const apiLines = logLines.filter((line) => / (GET|POST) \//.test(line));
    expect(apiLines.length).toBeGreaterThanOrEqual(paths.length + 1);
    for (const line of logLines) {
      for (const secret of [...secrets, auth.slice("Basic ".length)]) expect(line).not.toContain(secret);
    }
    // What the contract defines is still readable: fixed segments and ids.
    expect(logLines.some((line) => line.includes(`GET /v1/proxy-users/${other.id} 200`))).toBe(true);
    expect(logLines.some((line) => line.includes("GET /v1/proxy-users/[redacted] 404"))).toBe(true);
  });
});
