import fs from "node:fs";
import path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { BENCH_ROOT, REPO_ROOT, STACKS_DIR } from "./harness";
import { REPLAY_PROVIDER, type Recorded, recordForReplay } from "./replay";

/**
 * The stack benchmarks load the provider the way a user's program does: from a real folder in
 * node_modules. Only then does the closure serializer store a resource's provider as one
 * `require("pulumi-proxy/dist/provider/stubs/…")` line; the repository's own programs reach the
 * package through a self-link that resolves to the repository, so their state carries the stubs'
 * source instead, which is several times larger and makes every engine checkpoint slower.
 *
 * Layout, under a folder the tests never use (their stacks must keep resolving the self-link):
 *   .pulumi-proxy/bench/node_modules/pulumi-proxy       package.json and the built provider and SDK
 *   .pulumi-proxy/bench/node_modules/pulumi-proxy-noop  the no-op provider of the engine floor
 *   .pulumi-proxy/bench/node_modules/pulumi-proxy-replay  the same-state floor's provider (replay.ts)
 *   .pulumi-proxy/bench/stacks/<stack>                  work folders; the provider process resolves both from here
 * Dependencies (@pulumi/pulumi, undici, zod) resolve from the repository's node_modules.
 */

const MODULES = path.join(BENCH_ROOT, "node_modules");

/** Answers at once: inputs become outputs, reads return the recorded state. */
const NOOP_PROVIDER = `"use strict";
module.exports = {
  async create(inputs) { return { id: "noop-" + require("node:crypto").randomUUID(), outs: inputs }; },
  async read(id, props) { return { id, props }; },
  async diff() { return { changes: false }; },
  async delete() {},
};
`;

export interface Installed {
  provider: typeof import("../provider");
  /**
   * The native provider's generated Node SDK (`pulumi-proxy/native`), typed here by what the bench
   * calls: importing its types would compile the generated sources under this project's flags.
   */
  native: Record<"ProxyUser" | "ApiKey" | "IpAllocation", new (name: string, args: object) => unknown>;
  noopProvider: pulumi.dynamic.ResourceProvider;
  replayProvider: pulumi.dynamic.ResourceProvider;
  /** Records a real stack's exported state for the replay provider to give back. */
  recordForReplay(deployment: object): Recorded;
}

/** A package in the bench's node_modules holding one provider module, so state stores one require() line. */
function providerPackage(name: string, source: string): string {
  const dir = path.join(MODULES, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, version: "0.0.0", main: "index.js" }));
  fs.writeFileSync(path.join(dir, "index.js"), source);
  return dir;
}

export function installForBench(): Installed {
  const packageDir = path.join(MODULES, "pulumi-proxy");
  fs.rmSync(packageDir, { recursive: true, force: true });
  for (const part of ["contract", "provider", "sdk", "native-sdk"]) {
    fs.cpSync(path.join(REPO_ROOT, "dist", part), path.join(packageDir, "dist", part), { recursive: true });
  }
  fs.copyFileSync(path.join(REPO_ROOT, "package.json"), path.join(packageDir, "package.json"));

  const noopDir = providerPackage("pulumi-proxy-noop", NOOP_PROVIDER);
  const replayDir = providerPackage("pulumi-proxy-replay", REPLAY_PROVIDER);
  // Nothing recorded yet: this process only serializes the provider; provider processes read the record.
  recordForReplay({}, replayDir);
  fs.mkdirSync(STACKS_DIR, { recursive: true });

  return {
    provider: require(packageDir) as typeof import("../provider"),
    native: require(path.join(packageDir, "dist", "native-sdk", "nodejs")) as Installed["native"],
    noopProvider: require(noopDir) as pulumi.dynamic.ResourceProvider,
    replayProvider: require(replayDir) as pulumi.dynamic.ResourceProvider,
    recordForReplay: (deployment) => recordForReplay(deployment, replayDir),
  };
}
