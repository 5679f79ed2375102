import { z } from "zod";
import {
  ApiKeyId,
  CreateApiKeyBody,
  GRACE_HOURS_DEFAULT,
  GraceHours,
  SCOPES,
  type Scope,
  Scopes,
  Timestamp,
} from "../../../contract";
import { DAY_MS } from "../../../contract/pricing";
import type { ProxyClient, ApiKey as WireApiKey } from "../../../sdk";
import { walkable } from "../../core/coalescer";
import * as d from "../../core/descriptor";

/** The model of an API key: its inputs and outputs, one zod field each. */

/** Scopes are a set: one canonical order means no false diffs when the user reorders them. */
export const canonicalScopes = (scopes: readonly string[]): Scope[] => SCOPES.filter((scope) => scopes.includes(scope));

/** Any date-time JavaScript can read, stored as the API's UTC form so that one instant compares equal. */
const Instant = z
  .string()
  .refine((text) => !Number.isNaN(Date.parse(text)), "must be an ISO 8601 timestamp such as 2030-01-31T00:00:00Z")
  .transform((text) => new Date(text).toISOString())
  .pipe(Timestamp);

/** The model's fields carry their documentation (`describe`), which the native schema reads. */
export const inputs = {
  name: d.replaceOnChange(
    CreateApiKeyBody.shape.name.describe(
      "1–63 characters. Changing it replaces the key (the new key is created before the old is revoked).",
    ),
  ),
  scopes: d.replaceOnChange(
    Scopes.transform(canonicalScopes).describe(
      "A non-empty set of the seven scopes. Changing it replaces the key: the new key is created, then the old " +
        "one is revoked, and the old secret stops working at once (no grace period).",
    ),
  ),
  expiresAt: d.replaceOnChange(
    Instant.optional().describe("ISO 8601 UTC expiry, in the future; changing it replaces the key."),
  ),
  rotationTrigger: d.Trigger.optional().describe(
    "Any change of this value rotates the secret in place, like a keeper.",
  ),
  graceHours: GraceHours.default(GRACE_HOURS_DEFAULT).describe(
    "How long the previous secret keeps working after a rotation: 0–168 hours, default 24.",
  ),
  rotateAfterDays: d.changeDecidedBy(
    z
      .number()
      .int("must be a whole number of days")
      .min(1)
      .max(365)
      .optional()
      .describe(
        "Rotate the secret in place (with `graceHours`) once the last rotation, or else the creation, is this " +
          "many days old: a whole number, 1–365. The preview that finds it due plans the rotation.",
      ),
    (olds, news): d.Effect =>
      scheduledRotationOf(olds, news) || olds.rotateAfterDays !== news.rotateAfterDays ? "update" : "none",
  ),
  adoptId: d.createOnly(
    ApiKeyId.optional().describe(
      "Take over the existing key with this id (key_…) instead of creating one; rotate it to learn a secret.",
    ),
  ),
};

export const outputs = {
  keyId: z.string().describe("The key's id (key_…)."),
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  secret: z
    .string()
    .nullable()
    .describe(
      "The full secret: present after create or a rotation, never readable again from the API; null when " +
        "adopted or imported, until the next rotation.",
    ),
  secretHint: z.string().describe("The secret's last four characters."),
  createdAt: Timestamp.describe("When the key was created (ISO 8601, UTC)."),
  expiresAt: Timestamp.nullable(),
  lastRotatedAt: Timestamp.nullable().describe("When the secret was last rotated; null if never."),
  previousSecretExpiresAt: Timestamp.nullable().describe(
    "When the secret replaced by the last rotation stops working.",
  ),
  secretIsCurrent: z
    .boolean()
    .nullable()
    .describe(
      "Whether `secret` is the key's current secret, as of the last create, rotation or refresh: false once it " +
        "was rotated outside Pulumi (or a rotation's answer was lost); null without a secret.",
    ),
};

export type Shape = d.Descriptor<typeof inputs, typeof outputs, WireApiKey>;
export type Inputs = d.InputsOf<Shape>;
export type State = d.StateOf<Shape>;
export type Stored = d.StoredOf<Shape>;

export const label = (props: { name?: unknown }) => `ApiKey "${typeof props.name === "string" ? props.name : "?"}"`;

/** The list a refresh walks. */
export const reads = { kind: "apiKey", collection: (client: ProxyClient) => walkable(client.keys) } as const;

/** Why `up` rotates the key's secret, and the generation that keys the rotation exactly once. */
export interface Rotation {
  reason: string;
  generation: unknown[];
}

/**
 * The one rule for when an update rotates: the provider runs it, and the plan tells the reviewer.
 * A secret that is no longer the key's current one (rotated outside this stack, or a rotation whose
 * answer was lost) is rotated again, so the stack holds a secret that works; the generation is the
 * dead secret's hint, so a crash during the repair replays it.
 */
export function rotationOf(id: string, olds: State, news: Inputs): Rotation | undefined {
  if (olds.rotationTrigger !== news.rotationTrigger) {
    return { reason: "rotationTrigger changed", generation: [id, "trigger", news.rotationTrigger ?? null] };
  }
  if (holdsDeadSecret(olds)) {
    return {
      reason: `the secret in the state is no longer the key's current secret (the API's ends ${olds.secretHint}): it was rotated outside this stack, or a rotation's answer was lost`,
      generation: [id, "repair", olds.secret?.slice(-4) ?? "none"],
    };
  }
  const scheduled = scheduledRotationOf(olds, news);
  // The generation is the rotation it follows: a crash replays it, and the next `up` sees a new lastRotatedAt.
  return scheduled && { reason: scheduled.reason, generation: [id, "scheduled", scheduled.since] };
}

/** The timestamps of a key's state (or of a key the API lists) that date its secret. */
type SecretDates = { lastRotatedAt?: unknown; createdAt?: unknown };

/** When the key's secret was last set (its last rotation, or else its creation); undefined before it exists. */
export function secretSetAt(state: SecretDates): string | undefined {
  const since = state.lastRotatedAt ?? state.createdAt;
  return typeof since === "string" && !Number.isNaN(Date.parse(since)) ? since : undefined;
}

/** When `rotateAfterDays` makes the key due; undefined without a schedule or before the key exists. */
export function rotationDueAt(rotateAfterDays: unknown, since: string | undefined): Date | undefined {
  if (typeof rotateAfterDays !== "number" || since === undefined) return undefined;
  return new Date(Date.parse(since) + rotateAfterDays * DAY_MS);
}

/** A rotation `rotateAfterDays` asks for now, by this machine's clock: the key's secret is that many days old. */
function scheduledRotationOf(
  olds: SecretDates,
  news: { rotateAfterDays?: unknown },
): { reason: string; since: string } | undefined {
  const since = secretSetAt(olds);
  const due = rotationDueAt(news.rotateAfterDays, since);
  if (!since || !due || due.getTime() > Date.now()) return undefined;
  const days = Math.floor((Date.now() - Date.parse(since)) / DAY_MS);
  const event = olds.lastRotatedAt ? "last rotated" : "created";
  return {
    reason: `rotateAfterDays is ${news.rotateAfterDays} and the key was ${event} ${days} days ago (${since})`,
    since,
  };
}

/**
 * The stack holds a secret that is no longer the key's current one. A refresh records that as
 * `secretIsCurrent: false`; state from before that output compares the API's hint with the secret.
 */
export function holdsDeadSecret(olds: State): boolean {
  if (olds.secret == null) return false;
  if (olds.secretIsCurrent != null) return olds.secretIsCurrent === false;
  return olds.secretHint !== olds.secret.slice(-4);
}
