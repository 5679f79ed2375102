import path from "node:path";
import type { TestProject } from "vitest/node";
import { provisionPulumi } from "../scripts/provision-pulumi.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    pulumiBinDir: string;
  }
}

/** Every engine test runs the real CLI, so provisioning failures fail the run instead of skipping tests. */
export default async function setup(project: TestProject): Promise<void> {
  const cli: { binDir: string; version: string; source: string } = await provisionPulumi();
  process.env.PATH = `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}`;
  project.provide("pulumiBinDir", cli.binDir);
}
