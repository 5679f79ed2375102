import { createHash } from "node:crypto";
import * as pulumi from "@pulumi/pulumi";

/**
 * Exactly once across crashes.
 *
 * A write that must not happen twice (a create, a rotation, an address replacement, an allocation)
 * carries an idempotency key that the next run derives again, identically, after the process that
 * sent it was killed: the API then replays the first answer, secret or password included, instead
 * of acting a second time. The key is a digest of three things:
 *
 * 1. the stack: organization, project and stack name;
 * 2. the resource: its type, its name and its parents' types and names, which is what its URN says;
 * 3. the operation's generation: the inputs that make it a new operation (for a create, every input
 *    its request carries, so that another request never meets an earlier key, which the API would
 *    refuse; the `rotationTrigger`, the `replaceTrigger`, the object's id).
 *
 * A dynamic provider's `create` is not given the URN, so (1) and (2) are derived in the program
 * process, where the resource is declared, and reach the provider as a hidden input (`__identity`),
 * a digest that names nothing. The API scopes keys per API key; with the stack in the digest, two
 * stacks that declare the same names with one key never meet in the ledger.
 *
 * A replay can name an object that is gone since (destroyed, then declared again within the API's
 * 24 hours) or a secret that has been rotated since, and the API refuses to replay to another secret
 * of its key. The caller checks what the replay named and then moves to the next generation, which
 * adds what it found (`successor`): a new key, derived just as deterministically, so a crash during
 * that retry is recovered the same way.
 */

export const IDENTITY_INPUT = "__identity";

interface Chained {
  __parentResource?: pulumi.Resource;
}

export interface Identity {
  organization: string;
  project: string;
  stack: string;
  type: string;
  name: string;
  /** `type::name` of each parent, nearest first: the part of the URN the name does not give. */
  parents: string[];
}

/** Runs in the program process, in the resource's constructor. */
export function resourceIdentity(type: string, name: string, parent: pulumi.Resource | undefined): string {
  const parents: string[] = [];
  // The parent's URN would say the same, but as an output it would make the resource depend on its parent.
  for (let at = parent; at !== undefined; at = (at as Chained).__parentResource) {
    parents.push(`${pulumi.resourceType(at)}::${pulumi.resourceName(at)}`);
  }
  const stack = { organization: pulumi.getOrganization(), project: pulumi.getProject(), stack: pulumi.getStack() };
  return identityDigest({ ...stack, type, name, parents });
}

export function identityDigest(identity: Identity): string {
  const { organization, project, stack, type, name, parents } = identity;
  return `id1_${digest(["pulumi-proxy identity", organization, project, stack, type, name, ...parents])}`;
}

export function identityOf(inputs: Record<string, unknown> | undefined): string | undefined {
  const value = inputs?.[IDENTITY_INPUT];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

export type Operation = "create" | "rotate" | "replace";

/**
 * The idempotency key of one operation, or undefined for a resource declared without an identity
 * (a program built against an older release): the SDK then sends a random key, as before.
 */
export function operationKey(
  identity: string | undefined,
  operation: Operation,
  generation: readonly unknown[],
): string | undefined {
  if (identity === undefined) return undefined;
  return `pp1-${operation}-${digest([identity, operation, canonical(generation)])}`;
}

/** The generation after a replay named something that no longer holds (a gone id, a replaced secret). */
export function successor(generation: readonly unknown[], found: string): unknown[] {
  return [...generation, { replayed: found }];
}

/** How many stale replays in a row a rotation follows before giving up: each costs two requests. */
export const MAX_GENERATIONS = 8;

/**
 * How many earlier generations a create walks past: one per object of this resource, with these
 * inputs, destroyed within the API's 24 hours (each costs a replay and a read), so a stack torn down
 * and brought back hundreds of times a day still comes up. Only a fault past that is an error.
 */
export const MAX_CREATE_GENERATIONS = 1_000;

/** What `successor` adds after the API refused to replay a create to this secret of its key. */
export const REPLAY_REFUSED = "replay refused";

function digest(parts: readonly unknown[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url").slice(0, 43);
}

/** JSON with sorted keys, so the same inputs always give the same key. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value ?? null;
}
