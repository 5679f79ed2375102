import { execFileSync } from "node:child_process";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { provisionPulumi } from "../tools/provision-pulumi.mjs";
import { ensureSelfLink } from "../tools/self-link.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    pulumiBinDir: string;
  }
}

const repoRoot = path.resolve(__dirname, "..");

/**
 * Engine tests run the provider the way users do: the dynamic-provider process loads the compiled
 * package through node_modules, so it is built first. Every engine test runs the real CLI, so a
 * provisioning failure fails the run instead of skipping tests.
 */
export default async function setup(project: TestProject): Promise<void> {
  execFileSync(
    process.execPath,
    [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
    {
      cwd: repoRoot,
      stdio: "inherit",
    },
  );
  ensureSelfLink();
  const cli = await provisionPulumi();
  process.env.PATH = `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}`;
  project.provide("pulumiBinDir", cli.binDir);
}
