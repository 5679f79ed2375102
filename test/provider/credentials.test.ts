import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProxyUser } from "../../provider";
import { PLAINTEXT_API_KEY_FIX } from "../../provider/core/credentials";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { createTestStack, exportedStateAsUserSeesIt, REPO_ROOT, type TestStack } from "../support/pulumi";

/**
 * Pulumi records the stack config, proxy:apiKey included, as the default provider's inputs in the
 * state. A plaintext key is refused at preview with the command that encrypts it; the environment
 * variable stays allowed; after a switch of keys, `up` records the new one and a refresh uses the
 * recorded one.
 */

let server: ReferenceServer;
let harness: TestStack;

beforeAll(async () => {
  server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
  harness = await createTestStack({
    program: async () => {
      new ProxyUser("creds", { name: "creds" });
    },
    envVars: { PROXY_API_KEY: server.rootKey },
    config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey } },
  });
});
afterAll(async () => {
  await harness?.cleanup();
  await server?.close();
});

describe("provider credentials", () => {
  it("refuses a plaintext proxy:apiKey at preview with the exact fix, and allows PROXY_API_KEY", async () => {
    const { stack } = harness;
    const refused = await stack.preview().catch((error: unknown) => error);
    const message = String((refused as Error).message);
    expect(message).toContain("proxy:apiKey is stored in plain text");
    expect(message).toContain(PLAINTEXT_API_KEY_FIX);
    expect(message).not.toContain(server.rootKey);

    await stack.removeConfig("proxy:apiKey");
    expect((await stack.preview()).changeSummary).toEqual({ create: 2 });
  });

  // Issue #32, items 2, 4 and 5: each of these previewed clean ("+ 2 to create") and failed at up.
  it("fails the preview when the credentials cannot work, naming the setting and the fix, never the key", async () => {
    const { stack } = harness;
    const env = stack.workspace.envVars;
    const refusedKey = `live_${"Z".repeat(40)}`;
    const previewFailure = async (): Promise<{ message: string; requests: number }> => {
      server.resetStats();
      const failure = await stack.preview().then(
        () => new Error("the preview passed"),
        (error: Error) => error,
      );
      expect(failure.message).not.toContain("the preview passed");
      expect(failure.message).not.toContain(server.rootKey);
      expect(failure.message).not.toContain(refusedKey.slice(5, 15));
      return { message: failure.message, requests: server.stats().requests };
    };

    env.PROXY_API_KEY = refusedKey;
    const fromEnvironment = await previewFailure();
    expect(fromEnvironment.message).toContain(`cannot use the API at ${server.url} (proxy:apiUrl)`);
    expect(fromEnvironment.message).toContain("401 invalid_api_key");
    expect(fromEnvironment.message).toContain("The key is PROXY_API_KEY from the environment");
    expect(fromEnvironment.message).toContain("`pulumi config set --secret proxy:apiKey <key>`");
    expect(fromEnvironment.requests).toBe(1);

    await stack.setConfig("proxy:apiKey", { value: refusedKey, secret: true });
    const fromConfig = await previewFailure();
    expect(fromConfig.message).toContain("The key is the stack's proxy:apiKey; set one the API accepts with");
    expect(fromConfig.requests).toBe(1);
    // The troubleshooting guide has the entry for it, with the same fix.
    const guide = fs.readFileSync(path.join(REPO_ROOT, "docs", "guides", "troubleshooting.md"), "utf8");
    const entry = guide.split("**`401 invalid_api_key`.**")[1]?.split("\n\n")[0];
    expect(entry).toContain("`pulumi config set --secret proxy:apiKey <key>`");
    expect(entry).toContain("`PROXY_API_KEY`");

    await stack.removeConfig("proxy:apiKey");
    delete env.PROXY_API_KEY;
    const noKey = await previewFailure();
    expect(noKey.message).toContain("no API key is configured. Run `pulumi config set --secret proxy:apiKey live_…`");
    expect(noKey.requests).toBe(0);

    env.PROXY_API_KEY = server.rootKey;
    const hostAndPort = server.url.replace("http://", "");
    await stack.setConfig("proxy:apiUrl", { value: hostAndPort });
    const noScheme = await previewFailure();
    expect(noScheme.message).toContain(`proxy:apiUrl must be a URL with its scheme`);
    expect(noScheme.message).toContain(`got "${hostAndPort}". Run \`pulumi config set proxy:apiUrl ${server.url}\``);
    expect(noScheme.requests).toBe(0);

    await stack.removeConfig("proxy:apiUrl");
    const noUrl = await previewFailure();
    expect(noUrl.message).toContain("no API URL is configured. Run `pulumi config set proxy:apiUrl https://…`");

    await stack.setConfig("proxy:apiUrl", { value: server.url });
    server.resetStats();
    expect((await stack.preview()).changeSummary).toEqual({ create: 2 });
    expect(server.stats().requests).toBe(1);
  });

  it("refuses a provider setting that is not a whole number at preview, before any request", async () => {
    const { stack } = harness;
    const requestsBefore = server.stats().requests;
    await stack.setConfig("proxy:retryWindowSeconds", { value: "2m" });
    const refused = await stack.preview().catch((error: unknown) => error);
    await stack.removeConfig("proxy:retryWindowSeconds");
    expect(String((refused as Error).message)).toContain(
      'proxy:retryWindowSeconds must be a whole number of seconds (0 or more), got "2m". Run `pulumi config set proxy:retryWindowSeconds 30` or remove it.',
    );
    expect(server.stats().requests).toBe(requestsBefore);
  });

  it("records the key of the last up in the state, encrypted; a refresh uses it, an up records the new one", async () => {
    const { stack } = harness;
    const scopes = ["proxy-users:read", "proxy-users:write", "limits:write"];
    const first = server.control.createKey({ name: "first", scopes });
    await stack.setConfig("proxy:apiKey", { value: first.secret, secret: true });
    await stack.up();
    const state = await exportedStateAsUserSeesIt(harness);
    expect(state).toContain("proxy:apiKey");
    expect(state).not.toContain(first.secret);

    // Switch keys, and revoke the old one before any up has run with the new one.
    const second = server.control.createKey({ name: "second", scopes });
    await stack.setConfig("proxy:apiKey", { value: second.secret, secret: true });
    await new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey }).keys.revoke(first.id);
    const refused = await stack.refresh().catch((error: unknown) => error);
    expect(String((refused as Error).message)).toContain("invalid_api_key");

    await stack.up();
    expect((await stack.refresh()).summary.result).toBe("succeeded");
  });
});
