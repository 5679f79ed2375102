import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { PulumiFn } from "@pulumi/pulumi/automation";
import { inject } from "vitest";
import { type LocalStack, openLocalStack } from "../../harness/localStack";
import { vaultTransit } from "../../harness/vaultTransit";

export const REPO_ROOT = path.resolve(__dirname, "..", "..");

export interface TestStackOptions {
  /** Inline program; its dynamic providers run from a private folder inside the repository, so they resolve this package. */
  program?: PulumiFn;
  /** A directory holding Pulumi.yaml, for local programs such as the examples. */
  workDir?: string;
  projectName?: string;
  config?: Record<string, { value: string; secret?: boolean }>;
  envVars?: Record<string, string>;
}

export interface TestStack extends LocalStack {
  /** Pulumi home, backend and other per-test files live here and are removed by `cleanup`. */
  tempDir: string;
}

/**
 * A stack isolated from every other test (harness/localStack.ts). Inline programs get a work folder
 * under `.pulumi-proxy/stacks/` in the repository: the Automation API writes Pulumi.yaml there, and
 * the dynamic-provider process, which runs in it, resolves `pulumi-proxy` from the repository's node_modules.
 * Its secrets provider is Vault's transit engine on loopback (harness/vaultTransit.ts says why); what
 * users type, the README and docs runs, keeps the passphrase.
 */
export async function createTestStack(options: TestStackOptions): Promise<TestStack> {
  const local = await openLocalStack({
    ...options,
    secretsProvider: await vaultTransit(),
    binDir: inject("pulumiBinDir"),
    label: "test",
    programsDir: path.join(REPO_ROOT, ".pulumi-proxy", "stacks"),
    projectName: options.projectName ?? "pulumi-proxy-test",
  });
  return { ...local, tempDir: local.stateDir };
}

/**
 * What `pulumi stack export` prints, run as a user would (the Automation API's exportStack passes
 * --show-secrets), plus every state file of the stack's backend, for leak checks.
 */
export async function exportedStateAsUserSeesIt(harness: TestStack): Promise<string> {
  const exported = execFileSync(
    path.join(inject("pulumiBinDir"), "pulumi"),
    ["stack", "export", "--stack", harness.stackName],
    {
      cwd: harness.stack.workspace.workDir,
      env: { ...process.env, ...harness.envVars },
      encoding: "utf8",
    },
  );
  const backendDir = harness.envVars.PULUMI_BACKEND_URL?.replace(/^file:\/\//, "") ?? "";
  const stateFiles = fs
    .readdirSync(backendDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name), "utf8"));
  return [exported, ...stateFiles].join("\n");
}
