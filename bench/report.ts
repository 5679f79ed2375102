import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { refreshGoal, unavoidableRequests, windowFloorSeconds } from "./floors";
import { describeParallel, type Measured, type StackFigures } from "./stacks";

/** Tables for the stack cases: one row per phase, each against its true floor. */

const fixed = (value: number, digits = 1) => value.toFixed(digits);

const PHASES = ["up", "refresh", "destroy"] as const;
type Phase = (typeof PHASES)[number];

export interface PhaseFigures {
  measured: Measured;
  engineFloor: number;
  windowFloor: number;
  floor: number;
  ratio: number;
  /** Against the same-state floor: what the provider's own work adds (replay.ts). */
  sameStateRatio: number;
  unavoidable: number;
}

export function phaseFigures(r: StackFigures, phase: Phase): PhaseFigures {
  const measured = r[phase];
  const unavoidable = unavoidableRequests(phase, r.shape);
  const engineFloor = r.engineFloor[phase];
  // A fresh window opens with the phase's first request (the server's clock is shifted so), so its
  // schedule starts there; a crowded phase finds a window that opened before it started.
  const opensAt = r.crowd > 0 ? 0 : measured.firstRequest;
  const wait = windowFloorSeconds(unavoidable, measured.window);
  const windowFloor = wait > 0 ? opensAt + wait : 0;
  const floor = Math.max(engineFloor, windowFloor);
  const sameStateRatio = measured.seconds / Math.max(r.sameStateFloor[phase], windowFloor);
  return { measured, engineFloor, windowFloor, floor, ratio: measured.seconds / floor, sameStateRatio, unavoidable };
}

function caseLabel(r: StackFigures): string {
  const crowded = r.crowd > 0 ? `, crowded ${r.crowd * 100} %` : "";
  const checkpoints = r.env.PULUMI_SKIP_CHECKPOINTS ? ", no checkpoints" : "";
  return `${r.shape.label} (${r.resources})${crowded}${checkpoints}`;
}

export function stackTable(results: StackFigures[]): string {
  const rows = [
    "| stack | -p | phase | s | engine floor s | window floor s | ratio | same-state floor s (ratio) | requests (unavoidable) | 429s | longest pause s | window at start |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    for (const phase of PHASES) {
      const f = phaseFigures(r, phase);
      const m = f.measured;
      const goal = phase === "refresh" ? `, goal ≤ ${refreshGoal(r.shape)}` : "";
      const window = `${m.window.left} left, ${fixed(m.window.windowLeftMs / 1000)} s`;
      const other = r.crowd > 0 ? ` (other client ${m.otherRateLimited})` : "";
      rows.push(
        `| ${caseLabel(r)} | ${describeParallel(r.parallel)} | ${phase} | ${fixed(m.seconds)} | ${fixed(f.engineFloor)} | ${fixed(f.windowFloor)} | ${fixed(f.ratio, 2)} | ${fixed(r.sameStateFloor[phase])} (${fixed(f.sameStateRatio, 2)}) | ${m.requests} (${f.unavoidable}${goal}) | ${m.rateLimited}${other} | ${fixed(m.longestPause)} | ${window} |`,
      );
    }
  }
  return rows.join("\n");
}

export function footprintTable(results: StackFigures[]): string {
  const rows = [
    "| stack | -p | preview requests | state bytes/resource | `__provider` chars | provider peak MiB |",
    "|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const peak = Math.max(r.up.providerMb, r.refresh.providerMb, r.destroy.providerMb);
    rows.push(
      `| ${caseLabel(r)} | ${describeParallel(r.parallel)} | ${r.previewRequests} | ${r.state.bytesPerResource} (no-op ${r.state.noopBytesPerResource}) | ${r.state.providerChars} (no-op ${r.state.noopProviderChars}) | ${peak} (no-op ${r.noopProviderMb}) |`,
    );
  }
  return rows.join("\n");
}

export function machine(binDir: string): string {
  const pulumi = execFileSync(path.join(binDir, "pulumi"), ["version"], { encoding: "utf8" }).trim();
  const memGb = (os.totalmem() / 2 ** 30).toFixed(1);
  return `${new Date().toISOString().slice(0, 16)}Z: ${os.availableParallelism()} cores, ${memGb} GiB, node ${process.version}, pulumi ${pulumi}, ${loadAverage()}`;
}

export function loadAverage(): string {
  return `load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`;
}
