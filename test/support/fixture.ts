import type { PulumiFn } from "@pulumi/pulumi/automation";
import { detectDrift } from "../../cli/drift/detect";
import { ProxyClient } from "../../sdk";
import { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from "../../server";
import { createTestStack, type TestStack } from "./pulumi";

export interface ProviderFixture extends TestStack {
  server: ReferenceServer;
  /** An SDK client on the root key, for out-of-band changes and for checking what the server holds. */
  api: ProxyClient;
}

/** A reference server and a stack whose config points the provider at it, the key as a secret. */
export async function providerFixture(
  program: PulumiFn,
  serverOptions: ReferenceServerOptions = {},
): Promise<ProviderFixture> {
  const server = await startReferenceServer({ rateLimitPerMinute: 100_000, ...serverOptions });
  const harness = await createTestStack({
    program,
    config: { "proxy:apiUrl": { value: server.url }, "proxy:apiKey": { value: server.rootKey, secret: true } },
  });
  const api = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey });
  return {
    ...harness,
    server,
    api,
    async cleanup() {
      await harness.cleanup();
      await server.close();
    },
  };
}

/** Name → drifted property paths (or "deleted"), as the drift command reports them. */
export async function driftedResources(fixture: TestStack): Promise<Map<string, string[]>> {
  const report = await detectDrift(fixture.stack);
  return new Map(
    report.drifted.map((drift) => [
      drift.name,
      drift.kind === "deleted" ? ["deleted"] : drift.properties.map((p) => p.path),
    ]),
  );
}
