import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { Scope } from "../contract";
import { ApiKeyId, CreateApiKeyBody, GRACE_HOURS_DEFAULT, GraceHours, SCOPES, Scopes, Timestamp } from "../contract";
import type { ApiKey as WireApiKey } from "../sdk";
import { providerContext } from "./context";
import * as d from "./declaration";
import { createRecorded, keyedFor, rotateOnce } from "./exactlyOnce";
import { changed, explained, same, unlessGone } from "./shared";
import stubs from "./stubs/apiKey";

/** Scopes are a set: one canonical order means no false diffs when the user reorders them. */
const canonicalScopes = (scopes: readonly string[]): Scope[] => SCOPES.filter((scope) => scopes.includes(scope));

/** Any date-time JavaScript can read, stored as the API's UTC form so that one instant compares equal. */
const Instant = z
  .string()
  .refine((text) => !Number.isNaN(Date.parse(text)), "must be an ISO 8601 timestamp such as 2030-01-31T00:00:00Z")
  .transform((text) => new Date(text).toISOString())
  .pipe(Timestamp);

export const apiKey = d.declareResource({
  inputs: {
    /** 1–63 characters. Changing it replaces the key (the new key is created before the old is revoked). */
    name: CreateApiKeyBody.shape.name,
    /**
     * A non-empty set of the seven scopes. Changing it replaces the key: the new key is created, then
     * the old one is revoked, and the old secret stops working at once (no grace period).
     */
    scopes: Scopes.transform(canonicalScopes),
    /** ISO 8601 UTC expiry, in the future; changing it replaces the key. */
    expiresAt: Instant.optional(),
    /** Any change of this value rotates the secret in place, like a keeper. */
    rotationTrigger: d.Trigger.optional(),
    /** How long the previous secret keeps working after a rotation: 0–168 hours, default 24. */
    graceHours: GraceHours.default(GRACE_HOURS_DEFAULT),
    /** Take over the existing key with this id (key_…) instead of creating one; rotate it to learn a secret. */
    adoptId: ApiKeyId.optional(),
  },
  outputs: {
    keyId: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    /** The full secret: present after create or a rotation, never readable again from the API; null when adopted. */
    secret: z.string().nullable(),
    secretHint: z.string(),
    createdAt: Timestamp,
    expiresAt: Timestamp.nullable(),
    lastRotatedAt: Timestamp.nullable(),
    /** When the secret replaced by the last rotation stops working. */
    previousSecretExpiresAt: Timestamp.nullable(),
    /**
     * Whether `secret` is the key's current secret, as of the last create, rotation or refresh: false
     * once it was rotated outside Pulumi (or a rotation's answer was lost); null without a secret.
     */
    secretIsCurrent: z.boolean().nullable(),
  },
  secretOutputs: ["secret"],
  statusOutputs: ["previousSecretExpiresAt"],
});
type Inputs = d.InputsOf<typeof apiKey>;
type Stored = d.StoredOf<typeof apiKey>;

const label = (name: unknown) => `ApiKey "${typeof name === "string" ? name : "?"}"`;

/** A secret is current when the API's hint (its last four characters) is that secret's. */
const isCurrent = (key: WireApiKey, secret: string | null) =>
  secret === null ? null : key.secret_hint === secret.slice(-4);

function toState(key: WireApiKey, inputs: Inputs, secret: string | null): Stored {
  return d.stateOf(apiKey, inputs, {
    keyId: key.id,
    name: key.name,
    scopes: canonicalScopes(key.scopes),
    secret,
    secretHint: key.secret_hint,
    createdAt: key.created_at,
    expiresAt: key.expires_at,
    lastRotatedAt: key.last_rotated_at,
    previousSecretExpiresAt: key.previous_secret_expires_at,
    secretIsCurrent: isCurrent(key, secret),
  });
}

/** The stack holds a secret that is no longer the key's current one: the next update rotates. */
const holdsDeadSecret = (olds: d.StateOf<typeof apiKey>) =>
  olds.secret !== null &&
  olds.secret !== undefined &&
  (olds.secretIsCurrent === false || olds.secretHint !== olds.secret.slice(-4));

export const apiKeyHandler = d.handlerFor(apiKey, {
  // The API refuses to create an expired key; say so at preview. A key whose expiry has since
  // passed is not blocked: only a new or changed value would be sent.
  refine: (news, olds) =>
    news.expiresAt !== undefined && news.expiresAt !== olds.expiresAt && Date.parse(news.expiresAt) <= Date.now()
      ? [{ property: "expiresAt", reason: `expiresAt must be in the future (got "${news.expiresAt}")` }]
      : [],

  diff: (olds, news) => ({
    updates: [...changed(olds, news, ["rotationTrigger", "graceHours"]), ...(holdsDeadSecret(olds) ? ["secret"] : [])],
    replaces: changed(olds, news, ["name", "scopes", "expiresAt"]),
  }),

  async create(inputs) {
    const { client, reads } = providerContext();
    if (inputs.adoptId) {
      const existing = await explained(label(inputs.name), `adopt ${inputs.adoptId}`, client.keys.get(inputs.adoptId));
      if (existing.name !== inputs.name || !same(canonicalScopes(existing.scopes), inputs.scopes)) {
        throw new Error(
          `${label(inputs.name)}: adoptId ${inputs.adoptId} is the key "${existing.name}" with scopes ${existing.scopes.join(", ")}. Set name and scopes to match it to adopt it.`,
        );
      }
      return { id: existing.id, outs: toState(existing, inputs, null) };
    }
    const body = { name: inputs.name, scopes: inputs.scopes, expires_at: inputs.expiresAt };
    // Everything that forces a replacement is in the body, so the body never differs for one key.
    const keyed = keyedFor(inputs, [inputs.name, inputs.scopes, inputs.expiresAt], label(inputs.name));
    const result = await createRecorded(
      keyed,
      (request) => client.keys.create(body, request),
      (id) => reads.apiKey.read(id),
      (key, created) => toState(key, inputs, created.secret),
    );
    // A replayed create whose key was rotated since holds a secret that no longer works.
    if (result.outs.secretIsCurrent !== false) return result;
    return { id: result.id, outs: await repairSecret(result.id, result.outs, inputs) };
  },

  async read(id, olds) {
    const key = await providerContext().reads.apiKey.read(id);
    return key ? { id, props: toState(key, olds, olds.secret) } : {};
  },

  async update(id, olds, news) {
    const { client } = providerContext();
    if (olds.rotationTrigger !== news.rotationTrigger) {
      return { outs: await rotate(id, news, [id, "trigger", news.rotationTrigger ?? null]) };
    }
    if (holdsDeadSecret(olds)) return { outs: await repairSecret(id, olds as Stored, news) };
    return { outs: toState(await explained(label(news.name), "read it", client.keys.get(id)), news, olds.secret) };
  },

  async delete(id, olds) {
    const { client } = providerContext();
    await explained(
      label(olds.name),
      "revoke it",
      unlessGone(() => client.keys.revoke(id)),
    );
  },
});

/** Rotates exactly once per generation and reads the key after, so the stack holds its current secret. */
async function rotate(id: string, inputs: Inputs, generation: unknown[]): Promise<Stored> {
  const { client } = providerContext();
  const { rotated, current } = await explained(
    label(inputs.name),
    "rotate it",
    rotateOnce(
      keyedFor(inputs, generation, label(inputs.name)),
      (idempotencyKey) => client.keys.rotate(id, { grace_hours: inputs.graceHours }, { idempotencyKey }),
      () => client.keys.get(id),
    ),
  );
  return toState(current, inputs, rotated.secret);
}

/**
 * The stored secret is no longer the key's current one (rotated outside Pulumi, or a rotation whose
 * answer was lost). The generation is the dead secret's hint, so a crash during the repair replays it.
 */
async function repairSecret(id: string, stored: Stored, inputs: Inputs): Promise<Stored> {
  const deadHint = stored.secret?.slice(-4) ?? "none";
  await pulumi.log.warn(
    `${label(inputs.name)}: the secret in the state (ending ${deadHint}) is no longer the key's current secret ` +
      `(the API's ends ${stored.secretHint}): it was rotated outside this stack, or a rotation's answer was lost. ` +
      "Rotating the key now, so the stack holds a secret that works.",
  );
  return rotate(id, inputs, [id, "repair", deadHint]);
}

export type ApiKeyArgs = d.ArgsOf<typeof apiKey>;
/** A scoped API key. `secret` is a secret output, shown once by the API and kept only in (encrypted) state. */
export const ApiKey = d.resourceClass(apiKey, stubs, "ApiKey");
export type ApiKey = InstanceType<typeof ApiKey>;
