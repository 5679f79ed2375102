import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ADOPTION_PLAN_ENV, type AdoptionPlan } from "../../provider/core/adoption";
import type { LockHolder } from "./state";

/**
 * The adoption plan recover hands the `up` it runs (see provider/core/adoption.ts): since when an object
 * unknown to the state can only be an interrupted run's, and which ids the state holds. A killed run
 * writes no history, so the last entry of `pulumi stack history` (any kind, failed ones too: each
 * saved its state) ended before anything the state lacks was created.
 */

interface HistoryEntry {
  endTime?: string;
}

/** The latest end time among `pulumi stack history --json`'s entries; undefined when there are none. */
export function lastCompletedAt(historyJson: string): string | undefined {
  const entries = JSON.parse(historyJson || "[]") as HistoryEntry[] | null;
  const ends = (entries ?? []).map((entry) => Date.parse(entry.endTime ?? "")).filter(Number.isFinite);
  return ends.length > 0 ? new Date(Math.max(...ends)).toISOString() : undefined;
}

/** The ids of the resources a `pulumi stack export` records, pending deletes included. */
export function heldIds(exported: string): string[] {
  const deployment = (JSON.parse(exported) as { deployment?: { resources?: { id?: string; custom?: boolean }[] } })
    .deployment;
  return (deployment?.resources ?? []).flatMap((resource) => (resource.custom && resource.id ? [resource.id] : []));
}

/** Since: the last completed update's end, else (a stack never updated to the end) the killed run's lock. */
export function adoptionSince(historyJson: string, holders: LockHolder[]): { since: string; from: string } | undefined {
  const completed = lastCompletedAt(historyJson);
  if (completed) return { since: completed, from: "the end of the stack's last completed update" };
  const locked = holders
    .map((holder) => Date.parse(holder.timestamp ?? ""))
    .filter(Number.isFinite)
    .sort((a, b) => a - b)[0];
  return locked === undefined
    ? undefined
    : { since: new Date(locked).toISOString(), from: "the time the killed run locked the stack" };
}

/** Writes the plan where only this user can read it; returns the environment for the run and the cleanup. */
export function writeAdoptionPlan(plan: AdoptionPlan): { env: Record<string, string>; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-proxy-recover-"));
  const file = path.join(dir, "adoption.json");
  fs.writeFileSync(file, JSON.stringify(plan), { mode: 0o600 });
  return { env: { [ADOPTION_PLAN_ENV]: file }, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Past the API's 24 hours, the replayed creates of recover's \`up\` would create again: the plan lets
 * the provider take over what the killed run made instead. Undefined when nothing bounds the
 * interrupted run in time (no history and no lock).
 */
export async function adoptionPlan(
  history: () => Promise<{ code: number | null; stdout: string }>,
  exported: string,
  holders: LockHolder[],
): Promise<{ env: Record<string, string>; remove: () => void; detail: string } | undefined> {
  const listed = await history();
  const since = adoptionSince(listed.code === 0 ? listed.stdout : "[]", holders);
  if (!since) return undefined;
  const written = writeAdoptionPlan({ since: since.since, held: heldIds(exported) });
  const detail =
    `objects created since ${since.since} (${since.from}) that the state does not hold are an interrupted run's: ` +
    "a create whose inputs one matches takes it over instead of creating it again, also once the API has forgotten its idempotency key (24 h)";
  return { ...written, detail };
}
