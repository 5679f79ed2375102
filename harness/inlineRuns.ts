import * as pulumi from "@pulumi/pulumi";
import type { PulumiFn, Stack } from "@pulumi/pulumi/automation";

/**
 * Inline programs run in the caller's process (a test worker runs hundreds), each run with its own
 * gRPC clients to that run's engine: the resource monitor and the engine service. @pulumi/pulumi
 * 3.248 never closes them; its disconnect closes only the clients of a program that has a process of
 * its own. Once the engine exits, such a channel goes on reconnecting to the dead port, backing off
 * longer each time, and in between its connection sits in TRANSIENT_FAILURE in grpc-js's
 * process-wide subchannel pool (at the end of test/provider, one worker's pool held 22). A later
 * engine that happened to listen on the same port then saw its program's first call fail at once:
 * "14 UNAVAILABLE: No connection established. Last error: null" (once in CI, once here, in
 * different files).
 */

/**
 * The runtime's clients each get connections of their own (grpc-js's local subchannel pool), never
 * one that another channel to the same address is backing off on. The runtime passes this one
 * options object to every client it makes, so setting it once, before a run, covers them all.
 */
export function giveEachClientItsOwnConnections(): void {
  const settings = require("@pulumi/pulumi/runtime/settings") as { grpcClientOptions?: Record<string, unknown> };
  if (settings.grpcClientOptions === undefined) {
    throw new Error("@pulumi/pulumi/runtime/settings no longer exports grpcClientOptions: see harness/inlineRuns.ts");
  }
  settings.grpcClientOptions["grpc.use_local_subchannel_pool"] = 1;
}

/**
 * An inline program whose runs' clients close when the stack's operations that may run it (up,
 * preview, refresh, destroy) are over and none is in flight; `closeAll` closes what is left.
 */
export function closingItsClients(program: PulumiFn): {
  program: PulumiFn;
  closeAfterEachOperation(stack: Stack): void;
  closeAll(): void;
} {
  giveEachClientItsOwnConnections();
  const open = new Set<{ close(): void }>();
  let inFlight = 0;
  const closeAll = () => {
    for (const client of open) client.close();
    open.clear();
  };
  return {
    program: async () => {
      // This run's own clients (getting one the run has not used yet makes it; it connects at its first call).
      for (const client of [pulumi.runtime.getMonitor(), pulumi.runtime.getEngine()]) {
        if (client) open.add(client as unknown as { close(): void });
      }
      return program();
    },
    closeAfterEachOperation(stack) {
      for (const name of ["up", "preview", "refresh", "destroy"] as const) {
        const operation = stack[name].bind(stack) as (...args: unknown[]) => Promise<unknown>;
        Object.assign(stack, {
          [name]: async (...args: unknown[]) => {
            inFlight += 1;
            try {
              return await operation(...args);
            } finally {
              inFlight -= 1;
              if (inFlight === 0) closeAll();
            }
          },
        });
      }
    },
    closeAll,
  };
}
