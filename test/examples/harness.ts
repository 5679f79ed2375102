import fs from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from "../../server";
import { createTestStack, REPO_ROOT, type TestStack } from "../support/pulumi";

export const EXAMPLES_DIR = path.join(REPO_ROOT, "examples");

export interface ExampleFixture extends TestStack {
  dir: string;
  server: ReferenceServer;
  api: ProxyClient;
}

/**
 * An example's own program directory run as a stack against a fresh reference server. `config`
 * keys without a namespace belong to the example's project, as in its README.
 */
export async function exampleFixture(
  example: string,
  config: Record<string, string> = {},
  envVars: Record<string, string> = {},
  serverOptions: ReferenceServerOptions = {},
): Promise<ExampleFixture> {
  const dir = path.join(EXAMPLES_DIR, example);
  const server = await startReferenceServer({ rateLimitPerMinute: 100_000, ...serverOptions });
  const harness = await createTestStack({
    workDir: dir,
    envVars,
    config: {
      "proxy:apiUrl": { value: server.url },
      "proxy:apiKey": { value: server.rootKey, secret: true },
      ...Object.fromEntries(Object.entries(config).map(([key, value]) => [key, { value }])),
    },
  });
  return {
    ...harness,
    dir,
    server,
    api: new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey }),
    async cleanup() {
      await harness.cleanup();
      await server.close();
    },
  };
}

/** After `destroy` the account is back to its root key alone, and the example folder has no stack file left. */
export function expectNothingLeft(fixture: { server: ReferenceServer }): void {
  const held = fixture.server.control.snapshot();
  expect(held.proxyUsers).toEqual([]);
  expect(held.ips).toEqual([]);
  expect(held.keys.map((key) => (key as { name: string }).name)).toEqual(["root"]);
}

export function stackFileOf(fixture: ExampleFixture): string {
  return path.join(fixture.dir, `Pulumi.${fixture.stackName}.yaml`);
}

export function exists(file: string): boolean {
  return fs.existsSync(file);
}
