import { type DriftReport, detectDrift } from "../drift/detect";
import { formatDriftTable, plannedNote, writeDriftOutput } from "../drift/table";
import { eachFleetStack, type FleetStackResult, fleetFooter } from "./reports";

/**
 * `pulumi-proxy drift --fleet`: every stack of the fleet refreshed in a preview, one report. The JSON
 * (`version: 1`) lists each stack's drift report, or its error; exit 2 when any stack drifted, 1 when
 * any failed (a failed check is not a clean one), else 0.
 */
export interface FleetDriftJson {
  version: 1;
  fleet: string;
  drift: boolean;
  failed: number;
  checkedAt: string;
  stacks: FleetStackResult<DriftReport>[];
}

export async function runFleetDrift(
  fleetPath: string,
  options: { json?: string; pulumiRoot?: string },
): Promise<number> {
  const { spec, results } = await eachFleetStack(fleetPath, options.pulumiRoot, (stack) => detectDrift(stack));
  const drifted = results.filter((result) => (result.value?.drifted.length ?? 0) > 0).length;
  const failed = results.filter((result) => result.error !== undefined).length;
  const tables = results.flatMap((result) => (result.value ? [formatDriftTable(result.value)] : []));
  const text = [...tables, ...plannedNote(drifted > 0), fleetFooter(results, drifted, "drift")].join("\n\n");
  writeDriftOutput(
    text,
    options.json,
    (): FleetDriftJson => ({
      version: 1,
      fleet: spec.file,
      drift: drifted > 0,
      failed,
      checkedAt: new Date().toISOString(),
      stacks: results,
    }),
  );
  return failed > 0 ? 1 : drifted > 0 ? 2 : 0;
}
