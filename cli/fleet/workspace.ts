import fs from "node:fs";
import path from "node:path";
import { LocalWorkspace, Stack } from "@pulumi/pulumi/automation";
import { locatePulumi } from "../pulumiCli";
import { openStack } from "../stack";
import type { FleetSpec, Shard } from "./spec";

/** The fleet's stacks: every stack of the program's project whose config names its customer (`fleet:customer`). */
export interface FleetWorkspace {
  workspace: LocalWorkspace;
  /** The existing stack of a shard, or a new one. */
  open(shard: Shard): Promise<Stack>;
  /** The existing stack, not made the current one; its first command fails when it does not exist. */
  select(stack: string): Promise<Stack>;
  /** The stacks the fleet made that exist now, by name. */
  members(): Promise<string[]>;
}

export async function fleetWorkspace(spec: FleetSpec, pulumiRoot?: string): Promise<FleetWorkspace> {
  const cli = await locatePulumi(pulumiRoot);
  const envVars: Record<string, string> = {
    ...(cli.binDir ? { PATH: `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}` } : {}),
    // The fleet file decides, whatever the operator's shell says: see FleetSpec.checkpoints.
    PULUMI_SKIP_CHECKPOINTS: spec.checkpoints ? "false" : "true",
  };
  const workspace = await LocalWorkspace.create({ workDir: spec.program, pulumiCommand: cli.command, envVars });
  return {
    workspace,
    open: (shard) => Stack.createOrSelect(shard.stack, workspace),
    select: (stack) => openStack(stack, workspace),
    async members() {
      const names = (await workspace.listStacks()).map((summary) => summary.name.split("/").pop() ?? summary.name);
      // The settings file says whether the fleet made the stack; reading it costs no CLI process per stack.
      const settings = (name: string) => {
        const file = path.join(spec.program, `Pulumi.${name}.yaml`);
        return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
      };
      return names.filter((name) => /^\s*fleet:customer:/m.test(settings(name))).sort();
    },
  };
}
