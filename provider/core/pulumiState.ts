import type { Workspace } from "@pulumi/pulumi/automation";
import { specialSigKey } from "@pulumi/pulumi/runtime/rpc";

/**
 * How Pulumi marks a secret value in a stack's state and its exports (sdk/go/common/resource/sig):
 * an object with this key, and `ciphertext` (or, exported with --show-secrets, `plaintext`: the
 * value's JSON) beside it.
 */
export const SECRET_SIGNATURE = specialSigKey;

/**
 * The environment a LocalWorkspace runs the CLI with (its runPulumiCmd, not in the typings): the
 * process's, its Pulumi home, then its own variables; for a CLI command the Automation API lacks.
 * Here, below the CLI, so that the harness's reads of a stack use it without importing the CLI.
 */
export function workspaceEnv(workspace: Workspace): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...(workspace.pulumiHome ? { PULUMI_HOME: workspace.pulumiHome } : {}),
    ...workspace.envVars,
  };
}
