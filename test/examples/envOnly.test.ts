import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../server";
import { createTestStack, type TestStack } from "../support/pulumi";
import { EXAMPLES_DIR } from "./harness";

/**
 * A stack with no config at all, the credentials only in PROXY_API_URL / PROXY_API_KEY. The program
 * runs through the language host (a local program, not an inline one), which must hand the Node
 * runtime an empty config object rather than null.
 */
describe("a stack configured only by the environment", () => {
  let server: ReferenceServer;
  let harness: TestStack;
  const dir = path.join(EXAMPLES_DIR, "quickstart");

  beforeAll(async () => {
    server = await startReferenceServer({ rateLimitPerMinute: 100_000 });
    harness = await createTestStack({
      workDir: dir,
      envVars: { PROXY_API_URL: server.url, PROXY_API_KEY: server.rootKey },
    });
  });
  afterAll(async () => {
    await harness?.cleanup();
    await server?.close();
  });

  it("previews, comes up and is destroyed without a single config value", async () => {
    const { stack } = harness;
    expect(await stack.getAllConfig()).toEqual({});

    const preview = await stack.preview();
    expect(preview.changeSummary).toMatchObject({ create: 4 });

    const up = await stack.up();
    expect(up.summary.result).toBe("succeeded");
    expect(server.control.snapshot().proxyUsers).toHaveLength(1);

    await stack.destroy();
    expect(server.control.snapshot()).toMatchObject({ proxyUsers: [], ips: [] });
  });
});
