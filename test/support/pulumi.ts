import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LocalWorkspace, PulumiCommand, type PulumiFn, type Stack } from "@pulumi/pulumi/automation";
import { inject } from "vitest";

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

export interface TestStack {
  stack: Stack;
  stackName: string;
  /** Pulumi home, backend and other per-test files live here and are removed by `cleanup`. */
  tempDir: string;
  envVars: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function pulumiCommand(): Promise<PulumiCommand> {
  const binDir = inject("pulumiBinDir");
  return PulumiCommand.get({ root: path.dirname(binDir) });
}

/**
 * A stack isolated from every other test: its own Pulumi home, a file:// backend in a temp folder,
 * a passphrase secrets provider and a unique name. Inline programs get a work folder under
 * `.pulumi-proxy/stacks/` in the repository: the Automation API writes Pulumi.yaml there, and the
 * dynamic-provider process, which runs in it, resolves `pulumi-proxy` from the repository's node_modules.
 */
export async function createTestStack(options: TestStackOptions): Promise<TestStack> {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-test-"));
  const backendDir = path.join(tempDir, "backend");
  const pulumiHome = path.join(tempDir, "home");
  fs.mkdirSync(backendDir);
  fs.mkdirSync(pulumiHome);
  const envVars: Record<string, string> = {
    PULUMI_CONFIG_PASSPHRASE: "test-passphrase",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_BACKEND_URL: `file://${backendDir}`,
    PULUMI_HOME: pulumiHome,
    PATH: `${inject("pulumiBinDir")}${path.delimiter}${process.env.PATH ?? ""}`,
    ...options.envVars,
  };
  const stackName = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const projectName = options.projectName ?? "pulumi-proxy-test";
  const workspaceOptions = { pulumiHome, envVars, pulumiCommand: await pulumiCommand() };
  const inlineWorkDir = path.join(REPO_ROOT, ".pulumi-proxy", "stacks", stackName);
  if (options.program) fs.mkdirSync(inlineWorkDir, { recursive: true });
  const stack = options.program
    ? await LocalWorkspace.createStack(
        { stackName, projectName, program: options.program },
        {
          ...workspaceOptions,
          workDir: inlineWorkDir,
          projectSettings: { name: projectName, runtime: "nodejs", backend: { url: envVars.PULUMI_BACKEND_URL } },
        },
      )
    : await LocalWorkspace.createStack({ stackName, workDir: requireDir(options.workDir) }, workspaceOptions);
  for (const [key, entry] of Object.entries(options.config ?? {})) {
    await stack.setConfig(key, entry);
  }
  return {
    stack,
    stackName,
    tempDir,
    envVars,
    async cleanup() {
      await stack.workspace.removeStack(stackName, { force: true }).catch(() => undefined);
      fs.rmSync(tempDir, { recursive: true, force: true });
      fs.rmSync(inlineWorkDir, { recursive: true, force: true });
    },
  };
}

function requireDir(dir: string | undefined): string {
  if (!dir) throw new Error("createTestStack needs either a program or a workDir");
  return dir;
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
