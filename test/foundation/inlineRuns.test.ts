import { createRequire } from "node:module";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, describe, expect, it } from "vitest";
import { giveEachClientItsOwnConnections } from "../../harness/inlineRuns";
import { deadPort } from "../support/ports";
import { createTestStack } from "../support/pulumi";

/**
 * Inline programs run in the test worker, hundreds per worker (harness/inlineRuns.ts says why their
 * gRPC clients needed care). Both halves of the failure are checked: a run's clients outliving it,
 * and a new client taking over a dead one's failed connection to the same address.
 */
const fromPulumi = createRequire(require.resolve("@pulumi/pulumi"));
const grpc = fromPulumi("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
const resourceService = fromPulumi("./proto/resource_grpc_pb.js");
const resourceMessages = fromPulumi("./proto/resource_pb.js");
const runtimeSettings = fromPulumi("./runtime/settings") as { grpcClientOptions: Record<string, unknown> };

type MonitorClient = InstanceType<typeof grpc.Client> & {
  supportsFeature(request: unknown, callback: (error: Error | null) => void): void;
};

function askForAFeature(client: MonitorClient): Promise<Error | null> {
  return new Promise((resolve) => client.supportsFeature(new resourceMessages.SupportsFeatureRequest(), resolve));
}

const closeAfterwards: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closeAfterwards.splice(0)) await close();
});

describe("an inline program's connections to its engine", () => {
  it("are closed once the operation that ran it is over", async () => {
    let clients: InstanceType<typeof grpc.Client>[] = [];
    const harness = await createTestStack({
      program: async () => {
        clients = [pulumi.runtime.getMonitor(), pulumi.runtime.getEngine()] as unknown as typeof clients;
        return { ran: true };
      },
    });
    closeAfterwards.push(() => harness.cleanup());
    await harness.stack.up();
    expect(clients).toHaveLength(2);
    const states = clients.map((client) => grpc.connectivityState[client.getChannel().getConnectivityState(false)]);
    expect(states).toEqual(["SHUTDOWN", "SHUTDOWN"]);
  });

  it("never inherit another client's failed connection to the same address", async () => {
    giveEachClientItsOwnConnections();
    const address = `127.0.0.1:${await deadPort()}`;
    // Clients made as the runtime makes them (the pool shares a connection only between equal options).
    const runtimeClient = () =>
      new resourceService.ResourceMonitorClient(
        address,
        grpc.credentials.createInsecure(),
        runtimeSettings.grpcClientOptions,
      ) as MonitorClient;
    // One left open to an engine that has exited: its call fails and it keeps reconnecting.
    const abandoned = runtimeClient();
    closeAfterwards.push(() => abandoned.close());
    expect((await askForAFeature(abandoned))?.message).toMatch(/UNAVAILABLE/);

    // A later engine listening on the same port, and its program's client.
    const engine = new grpc.Server();
    engine.addService(resourceService.ResourceMonitorService, {
      supportsFeature: (_call: unknown, callback: (error: null, response: unknown) => void) =>
        callback(null, new resourceMessages.SupportsFeatureResponse()),
    });
    await new Promise<void>((resolve, reject) =>
      engine.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    closeAfterwards.push(() => engine.forceShutdown());
    const program = runtimeClient();
    closeAfterwards.push(() => program.close());
    expect(await askForAFeature(program)).toBeNull();
  });
});
