import fs from "node:fs";
import path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { BENCH_ROOT, REPO_ROOT, STACKS_DIR } from "./harness";

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
  noopProvider: pulumi.dynamic.ResourceProvider;
}

export function installForBench(): Installed {
  const packageDir = path.join(MODULES, "pulumi-proxy");
  fs.rmSync(packageDir, { recursive: true, force: true });
  for (const part of ["provider", "sdk"]) {
    fs.cpSync(path.join(REPO_ROOT, "dist", part), path.join(packageDir, "dist", part), { recursive: true });
  }
  fs.copyFileSync(path.join(REPO_ROOT, "package.json"), path.join(packageDir, "package.json"));

  const noopDir = path.join(MODULES, "pulumi-proxy-noop");
  fs.mkdirSync(noopDir, { recursive: true });
  fs.writeFileSync(
    path.join(noopDir, "package.json"),
    JSON.stringify({ name: "pulumi-proxy-noop", version: "0.0.0", main: "index.js" }),
  );
  fs.writeFileSync(path.join(noopDir, "index.js"), NOOP_PROVIDER);
  fs.mkdirSync(STACKS_DIR, { recursive: true });

  return {
    provider: require(packageDir) as typeof import("../provider"),
    noopProvider: require(noopDir) as pulumi.dynamic.ResourceProvider,
  };
}
