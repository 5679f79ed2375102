import type { ApiKey as WireApiKey } from "../../../sdk";
import type { ProviderContext } from "../../core/context";
import * as d from "../../core/descriptor";
import { explained, unlessGone } from "../../core/errors";
import { createRecorded, keyedFor, rotateOnce } from "../../core/exactlyOnce";
import { same } from "../../core/sameValue";
import { apiKeyDeadlines } from "./deadlines";
import { apiKeyReview } from "./review";
import {
  canonicalScopes,
  holdsDeadSecret,
  type Inputs,
  inputs,
  label,
  outputs,
  type Rotation,
  reads,
  rotationOf,
  type Shape,
  type Stored,
} from "./schema";

/** A secret is current when the API's hint (its last four characters) is that secret's. */
const isCurrent = (key: WireApiKey, secret: string | null) =>
  secret === null ? null : key.secret_hint === secret.slice(-4);

function toState(key: WireApiKey, inputs: Inputs, secret: string | null): Stored {
  return d.stateOf<Shape>(inputs, {
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

/** Rotates exactly once per generation and reads the key after, so the stack holds its current secret. */
async function rotate(
  { client, warn }: ProviderContext,
  id: string,
  inputs: Inputs,
  rotation: Rotation,
  graceHours = inputs.graceHours,
) {
  if (rotation.generation[1] === "repair")
    warn(`${label(inputs)}: ${rotation.reason}. Rotating the key now, so the stack holds a secret that works.`);
  const { rotated, current } = await explained(
    label(inputs),
    "rotate it",
    rotateOnce(
      keyedFor(inputs, rotation.generation, label(inputs)),
      (idempotencyKey) => client.keys.rotate(id, { grace_hours: graceHours }, { idempotencyKey }),
      () => client.keys.get(id),
    ),
  );
  return toState(current, inputs, rotated.secret);
}

async function adopt({ client }: ProviderContext, inputs: Inputs, id: string) {
  const existing = await explained(label(inputs), `adopt ${id}`, client.keys.get(id));
  if (existing.name !== inputs.name || !same(canonicalScopes(existing.scopes), inputs.scopes)) {
    throw new Error(
      `${label(inputs)}: adoptId ${id} is the key "${existing.name}" with scopes ${existing.scopes.join(", ")}. Set name and scopes to match it to adopt it.`,
    );
  }
  return { id: existing.id, outs: toState(existing, inputs, null) };
}

/**
 * Recover's run, past the API's 24 hours: a key a killed run created with these inputs is taken over
 * instead of created twice (adoption.ts). Its secret was never delivered to anyone, so it is rotated at
 * once, with no grace: the stack holds the only secret that works.
 */
async function takeOverOrphan(ctx: ProviderContext, inputs: Inputs) {
  const orphan = await ctx.adoption?.claim(
    "ApiKey",
    () => ctx.client.keys.list(),
    (key) => key.created_at,
    (key) =>
      key.name === inputs.name &&
      same(canonicalScopes(key.scopes), inputs.scopes) &&
      same(key.expires_at && Date.parse(key.expires_at), inputs.expiresAt && Date.parse(inputs.expiresAt)),
  );
  if (!orphan) return undefined;
  ctx.warn(
    `${label(inputs)}: took over key ${orphan.id}, which an interrupted run created and no state recorded; its secret was never delivered, so it is rotated now with no grace period.`,
  );
  const rotation = { reason: "taken over from an interrupted run", generation: [orphan.id, "adopt"] };
  return { id: orphan.id, outs: await rotate(ctx, orphan.id, inputs, rotation, 0) };
}

/** The fields alone, for reading a stored state as the rules see it (upgradeState) inside the rules. */
const FIELDS = { inputs, outputs };

export const apiKey = d.describeKind({
  description:
    "A scoped API key. `secret` is a secret output, shown once by the API and kept only in (encrypted) state.",
  ...reads,
  type: "ApiKey",
  example: { name: "ci-usage", scopes: ["usage:read"], graceHours: 24 },
  inputs,
  outputs,
  secretOutputs: ["secret"],
  statusOutputs: ["previousSecretExpiresAt"],
  label,
  review: apiKeyReview,
  deadlines: apiKeyDeadlines,
  rules: {
    // The API refuses to create an expired key; say so at preview. A key whose expiry has since
    // passed is not blocked: only a new or changed value would be sent.
    refine: (news, olds) =>
      news.expiresAt !== undefined && news.expiresAt !== olds.expiresAt && Date.parse(news.expiresAt) <= Date.now()
        ? [{ property: "expiresAt", reason: `expiresAt must be in the future (got "${news.expiresAt}")` }]
        : [],

    // A secret that stopped working is repaired by the next update, whatever the inputs say.
    extraUpdates: (olds) => (holdsDeadSecret(olds) ? ["secret"] : []),

    // A rotation no input's change explains: the preview says why, in the words the plan uses.
    advice(olds, news) {
      const rotation = rotationOf(olds.keyId, olds, news);
      if (rotation?.generation[1] !== "scheduled") return [];
      return [
        `${label(news)}: up rotates the secret in place, the old one working for ${news.graceHours} h: ${rotation.reason}.`,
      ];
    },

    async create(ctx, inputs) {
      if (inputs.adoptId) return adopt(ctx, inputs, inputs.adoptId);
      const orphan = await takeOverOrphan(ctx, inputs);
      if (orphan) return orphan;
      const body = { name: inputs.name, scopes: inputs.scopes, expires_at: inputs.expiresAt };
      // Everything that forces a replacement is in the body, so the body never differs for one key.
      const keyed = keyedFor(inputs, [inputs.name, inputs.scopes, inputs.expiresAt], label(inputs), ctx.adoption);
      const result = await createRecorded(
        keyed,
        (request) => ctx.client.keys.create(body, request),
        (id) => ctx.read(reads, id),
        (key, created) => toState(key, inputs, created.secret),
      );
      // A replayed create whose key was rotated since holds a secret that no longer works.
      const repair =
        result.outs.secretIsCurrent === false &&
        rotationOf(result.id, d.upgradeState<Shape>(FIELDS, result.outs), inputs);
      return repair ? { id: result.id, outs: await rotate(ctx, result.id, inputs, repair) } : result;
    },

    async read(ctx, id, olds) {
      const key = await ctx.read(reads, id);
      return key ? toState(key, olds, olds.secret) : undefined;
    },

    async update(ctx, id, olds, news) {
      const rotation = rotationOf(id, olds, news);
      if (rotation) return rotate(ctx, id, news, rotation);
      return toState(await explained(label(news), "read it", ctx.client.keys.get(id)), news, olds.secret);
    },

    async delete({ client }, id, olds) {
      await explained(
        label(olds),
        "revoke it",
        unlessGone(() => client.keys.revoke(id)),
      );
    },
  },
});
