import { emptyReport, type RecoverArgs, type RecoverReport, recoverStack } from "../recover/steps";
import { eachFleetStack, type FleetStackResult, fleetFooter } from "./reports";

/** What `recover --fleet --json` prints (`version: 1`): each stack's report, or its error. */
export interface FleetRecoverJson {
  version: 1;
  fleet: string;
  recovered: boolean;
  stacks: FleetStackResult<RecoverReport>[];
}

/**
 * `pulumi-proxy recover --fleet`: every stack of the fleet recovered as `recover --stack` recovers one,
 * `concurrency` at a time, after a killed `fleet up` or `fleet destroy` (a cancelled CI job) left
 * locks and operations in flight in some of them. Without --up or --destroy a stack the kill never
 * reached is left as it is (and a locked one with nothing in flight is refused, asking which);
 * with one, every stack runs it. Each line names its stack. Exit 0 when every stack is consistent.
 */
export async function runFleetRecover(
  fleetPath: string,
  options: Omit<RecoverArgs, "stack" | "cwd">,
  out: NodeJS.WritableStream,
): Promise<number> {
  const { spec, results } = await eachFleetStack(fleetPath, options.pulumiRoot, async (stack) => {
    const report = emptyReport(stack.name);
    const log = (line: string) => out.write(`[${stack.name}] ${line}\n`);
    // Several engines at once would interleave their output: each stack's steps say what it ran.
    const args = { ...options, stack: stack.name, cwd: stack.workspace.workDir, quietEngine: true };
    await recoverStack(args, report, log);
    log("consistent: unlocked, nothing pending");
    return report;
  });
  const failed = results.filter((result) => result.error !== undefined).length;
  const finished = results.filter((result) => (result.value?.operation ?? "nothing") !== "nothing").length;
  out.write(`${fleetFooter(results, finished, "a run finished")}\n`);
  if (options.json) {
    const json: FleetRecoverJson = { version: 1, fleet: spec.file, recovered: failed === 0, stacks: results };
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  }
  return failed === 0 ? 0 : 1;
}
