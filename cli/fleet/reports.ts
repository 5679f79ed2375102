import type { Stack } from "@pulumi/pulumi/automation";
import { describeFailure, UsageError } from "../stack";
import { inPool } from "./pool";
import { type FleetSpec, loadFleet } from "./spec";
import { fleetWorkspace } from "./workspace";

/**
 * `drift` and `plan` over a whole fleet: `--fleet <file or dir>` in place of `--stack` and `--cwd`.
 * Every other option is the single-stack form's, so the fleet form parses them with its parser:
 * `withFleetStack` takes `--fleet` out and names the program folder and a stand-in stack instead.
 */
export function fleetOption(argv: string[]): { fleet?: string; rest: string[] } {
  const at = argv.findIndex((arg) => arg === "--fleet" || arg.startsWith("--fleet="));
  if (at < 0) return { rest: argv };
  const arg = argv[at] as string;
  const inline = arg.startsWith("--fleet=");
  const fleet = inline ? arg.slice("--fleet=".length) : argv[at + 1];
  if (!fleet || fleet.startsWith("--")) throw new UsageError("--fleet needs the fleet file or its folder");
  if (argv.includes("--stack") || argv.some((a) => a.startsWith("--stack="))) {
    throw new UsageError("--fleet and --stack exclude each other: --fleet covers every stack of the fleet");
  }
  return { fleet, rest: [...argv.slice(0, at), ...argv.slice(at + (inline ? 1 : 2))] };
}

export function withFleetStack(rest: string[], spec: FleetSpec): string[] {
  return [...rest, "--stack", "fleet", "--cwd", spec.program];
}

export interface FleetStackResult<R> {
  stack: string;
  value?: R;
  error?: string;
}

/** Runs `work` on every stack of the fleet, `concurrency` at a time; a stack that fails is reported, not fatal. */
export async function eachFleetStack<R>(
  fleetPath: string,
  pulumiRoot: string | undefined,
  work: (stack: Stack) => Promise<R>,
): Promise<{ spec: FleetSpec; results: FleetStackResult<R>[] }> {
  const spec = loadFleet(fleetPath);
  const fleet = await fleetWorkspace(spec, pulumiRoot);
  const members = await fleet.members();
  const settled = await inPool(members, spec.concurrency, async (name) => work(await fleet.select(name)));
  const results = settled.map((result, index): FleetStackResult<R> => {
    const stack = members[index] as string;
    return result.status === "fulfilled"
      ? { stack, value: result.value }
      : { stack, error: describeFailure(result.reason, { stack, cwd: spec.program }) };
  });
  return { spec, results };
}

/** The line under a fleet report: how many stacks, how many with findings, how many failed. */
export function fleetFooter(results: FleetStackResult<unknown>[], found: number, noun: string): string {
  const failed = results.filter((result) => result.error !== undefined);
  return [
    ...failed.map((result) => `Stack ${result.stack} failed: ${result.error}`),
    `Fleet: ${results.length} stack${results.length === 1 ? "" : "s"}, ${found} with ${noun}, ${failed.length} failed.`,
  ].join("\n");
}
