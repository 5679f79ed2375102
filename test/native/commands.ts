import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import type { ProviderFixture } from "../support/fixture";
import { REPO_ROOT } from "../support/pulumi";

const exec = promisify(execFile);
const MAIN = path.join(REPO_ROOT, "dist", "cli", "main.js");

/** The commands a user runs on the fixture's stack: the pinned Pulumi CLI and the installed pulumi-proxy. */
export function stackCommands(fixture: ProviderFixture) {
  const env = () => ({ ...process.env, ...fixture.stack.workspace.envVars });
  return {
    /** `pulumi <args> --stack <the stack> --non-interactive`, in the program's folder. */
    pulumi: (args: string[]) =>
      exec(path.join(inject("pulumiBinDir"), "pulumi"), [...args, "--stack", fixture.stackName, "--non-interactive"], {
        cwd: fixture.stack.workspace.workDir,
        env: env(),
        maxBuffer: 64 * 1024 * 1024,
      }),

    /** `pulumi-proxy coverage` on the stack; exit 2 (unmanaged objects) is an answer, not a failure. */
    async coverage(extra: string[]): Promise<{ code: number; stdout: string }> {
      const args = ["coverage", "--stack", fixture.stackName, "--cwd", fixture.stack.workspace.workDir, ...extra];
      try {
        return { code: 0, stdout: (await exec(process.execPath, [MAIN, ...args], { env: env() })).stdout };
      } catch (error) {
        const failed = error as { code: number; stdout: string; stderr: string };
        if (failed.code !== 2) throw new Error(`coverage exited ${failed.code}: ${failed.stderr}`);
        return { code: 2, stdout: failed.stdout };
      }
    },

    /** `pulumi-proxy report --stack` on the stack, with its own extra flags. */
    report: async (extra: string[]): Promise<string> => {
      const args = ["report", "--stack", fixture.stackName, "--cwd", fixture.stack.workspace.workDir, ...extra];
      return (await exec(process.execPath, [MAIN, ...args], { env: env(), maxBuffer: 64 * 1024 * 1024 })).stdout;
    },

    /** `npx pulumi-proxy provider install` into the stack's own Pulumi home; plugins on PATH are then ignored. */
    async installPlugin(): Promise<void> {
      await exec(process.execPath, [MAIN, "provider", "install"], {
        env: { ...process.env, PULUMI_HOME: fixture.envVars.PULUMI_HOME },
      });
      fixture.stack.workspace.envVars.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
    },
  };
}
