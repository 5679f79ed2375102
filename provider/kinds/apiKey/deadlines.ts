import type { Deadline } from "../../core/descriptor";
import { rotationDueAt, secretSetAt } from "./schema";

/**
 * A key's dates that call for someone: its scheduled rotation (`rotateAfterDays` after its secret was
 * set) and its expiry (`expiresAt`), from the outputs the state recorded. Never reads the secret.
 */
export function apiKeyDeadlines(outputs: Record<string, unknown>): Deadline[] {
  const rotation = rotationDueAt(outputs.rotateAfterDays, secretSetAt(outputs));
  const expiry = typeof outputs.expiresAt === "string" ? new Date(outputs.expiresAt) : undefined;
  const deadlines: Deadline[] = [];
  if (rotation && !Number.isNaN(rotation.getTime())) deadlines.push({ event: "rotation", at: rotation });
  if (expiry && !Number.isNaN(expiry.getTime())) deadlines.push({ event: "expiry", at: expiry });
  return deadlines;
}
