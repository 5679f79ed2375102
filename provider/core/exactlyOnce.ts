import { type AnswerInfo, ConflictError, ErrorCode } from "../../sdk";
import type { Adoption } from "./adoption";
import { ExplainedError, explain, PartialFailure } from "./errors";
import {
  identityOf,
  MAX_CREATE_GENERATIONS,
  MAX_GENERATIONS,
  type Operation,
  operationKey,
  REPLAY_REFUSED,
  successor,
} from "./idempotency";

/**
 * The writes that must happen once, each sent under a key the next run derives again (see
 * idempotency.ts), and each checked after the answer: an answer may be a replay of an earlier run's,
 * and what it names may no longer hold. Then the operation moves to its next generation.
 */

export interface Keyed {
  identity: string | undefined;
  generation: readonly unknown[];
  /** `ApiKey "ci"`, for messages. */
  label: string;
  /** In recover's run: the objects other resources of this run took over, which a replay must not name too. */
  adoption?: Adoption | undefined;
  /**
   * The API refuses a second object of these inputs (a proxy user's name is unique), so a create may
   * move past a replay it cannot read: if that earlier object still exists, the create is refused too.
   */
  unique?: boolean | undefined;
}

/** The API refused a key used with another body or secret; the error may come explained, its cause the API's. */
function isKeyReused(error: unknown): boolean {
  const api = error instanceof ConflictError ? error : (error as { cause?: unknown } | undefined)?.cause;
  return api instanceof ConflictError && api.code === ErrorCode.enum.idempotency_key_reused;
}

/** An earlier create's answer cannot be replayed to this secret, and creating again could make a second object. */
export class InterruptedRunDiffers extends ExplainedError {}

/**
 * The API refused to replay an earlier create of these inputs: it was sent with another secret of
 * proxy:apiKey's key (rotated since), which alone can read the answer. Creating under the next
 * generation is safe when no second object can come of it: the API refuses one (`unique`), or
 * recover's run has already taken over what a killed run made (adoption.ts). Otherwise the earlier
 * object may be a killed run's, outside the state, and only recover can tell.
 */
function refusedReplay(keyed: Keyed, error: unknown): void {
  if (keyed.unique || keyed.adoption) return;
  throw new InterruptedRunDiffers(
    `${keyed.label}: the API will not replay an earlier create with these inputs (in the last 24 hours, under another ` +
      "secret of proxy:apiKey's key: only that secret can read its answer), so creating again could make a second object " +
      "if a run that was killed or failed made it. Run `pulumi-proxy recover --stack <stack> --up`: it takes over what " +
      "such a run made, or creates afresh when there is nothing to take. Or set proxy:apiKey back to that secret and run `pulumi up`.",
    { cause: error },
  );
}

/** The object was created (or replayed) but could not be read back: the caller records it as a partial failure. */
export class CreatedButUnread<T> extends Error {
  constructor(
    readonly created: T,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** What a create sends with its request: the derived idempotency key, and a hook told whether the answer was a replay. */
export interface CreateRequest {
  idempotencyKey: string | undefined;
  onAnswer: (answer: AnswerInfo) => void;
}

/**
 * Creates (or replays the create of) the object, then reads it back. A fresh answer (201, not
 * replayed) is that read: it is the object as the API holds it right after the only write that has
 * touched it, so asking again would only spend a request of the key's budget and hold the engine's
 * step for a round trip. A replayed answer is the API's record of an earlier request, up to 24 hours
 * old, so the object is read as it is now; a replay that names an object that is gone (destroyed, then
 * declared again within the API's 24 hours) is never kept: the next generation, derived from the gone
 * id, creates afresh. The generation holds every input of the request (idempotency.ts), so an
 * earlier create with other inputs never meets this key.
 */
export async function createOnce<T extends R & { id: string }, R>(
  keyed: Keyed,
  create: (request: CreateRequest) => Promise<T>,
  readBack: (id: string) => Promise<R | undefined>,
): Promise<{ created: T; current: R }> {
  let generation = keyed.generation;
  for (let round = 0; round < MAX_CREATE_GENERATIONS; round++) {
    let created: T;
    let replayed = true;
    try {
      created = await create({
        idempotencyKey: operationKey(keyed.identity, "create", generation),
        onAnswer: (answer) => {
          replayed = answer.replayed;
        },
      });
    } catch (error) {
      if (!isKeyReused(error)) throw error;
      refusedReplay(keyed, error);
      generation = successor(generation, REPLAY_REFUSED);
      continue;
    }
    // A replay of an object another resource of recover's run took over (adoption.ts) is theirs now.
    if (keyed.adoption && !keyed.adoption.take(created.id)) {
      generation = successor(generation, created.id);
      continue;
    }
    // Unknown (a client that never reports answers) counts as replayed: reading again is always safe.
    if (!replayed) return { created, current: created };
    let current: R | undefined;
    try {
      current = await readBack(created.id);
    } catch (error) {
      throw new CreatedButUnread(created, error);
    }
    if (current !== undefined) return { created, current };
    generation = successor(generation, created.id);
  }
  throw new Error(
    `${keyed.label}: ${MAX_CREATE_GENERATIONS} creates in a row named objects that were gone at once; try again.`,
  );
}

/**
 * Runs a write that hands out a secret (a rotation), then asks which secret is current. A replay whose
 * secret has been replaced since (by a later rotation, in or out of Pulumi) is never kept: the next
 * generation rotates again, so the stack ends up holding the current secret.
 */
export async function rotateOnce<T extends { secret: string }, R extends { secret_hint: string }>(
  keyed: Keyed,
  rotate: (idempotencyKey: string | undefined) => Promise<T>,
  readCurrent: () => Promise<R>,
): Promise<{ rotated: T; current: R }> {
  let generation = keyed.generation;
  for (let round = 0; round < MAX_GENERATIONS; round++) {
    let rotated: T;
    try {
      rotated = await rotate(operationKey(keyed.identity, "rotate", generation));
    } catch (error) {
      // The interrupted run rotated with other settings (graceHours); its secret cannot be replayed.
      if (!isKeyReused(error)) throw error;
      generation = successor(generation, "settings changed");
      continue;
    }
    const current = await readCurrent();
    if (current.secret_hint === rotated.secret.slice(-4)) return { rotated, current };
    generation = successor(generation, current.secret_hint);
  }
  throw new Error(`${keyed.label}: its secret kept changing while it was rotated; try again.`);
}

/**
 * A write that changes an object once per generation and hands out nothing that only its answer
 * carries (an address replacement). Undefined when an interrupted run already did it with other
 * settings: it happened, so it is not done again; the caller reads the object instead.
 */
export async function changeOnce<T>(
  keyed: Keyed,
  operation: Operation,
  change: (idempotencyKey: string | undefined) => Promise<T>,
): Promise<T | undefined> {
  try {
    return await change(operationKey(keyed.identity, operation, keyed.generation));
  } catch (error) {
    if (isKeyReused(error)) return undefined;
    throw error;
  }
}

/** The keying of one resource's operation: its identity (the hidden input) and the operation's generation. */
export function keyedFor(
  inputs: object,
  generation: readonly unknown[],
  label: string,
  adoption?: Adoption | undefined,
  unique?: boolean,
): Keyed {
  return { identity: identityOf(inputs as Record<string, unknown>), generation, label, adoption, unique };
}

/**
 * `create` for a resource: created (or replayed) exactly once and read back; when the read-back
 * fails, the object is still recorded, as a partial failure, so it is never orphaned.
 */
export async function createRecorded<R, C extends R & { id: string }, S extends object>(
  keyed: Keyed,
  create: (request: CreateRequest) => Promise<C>,
  readBack: (id: string) => Promise<R | undefined>,
  toState: (current: R, created: C) => S,
): Promise<{ id: string; outs: S }> {
  try {
    const { created, current } = await createOnce(keyed, create, readBack);
    return { id: created.id, outs: toState(current, created) };
  } catch (error) {
    if (error instanceof InterruptedRunDiffers) throw error;
    if (!(error instanceof CreatedButUnread)) throw explain(keyed.label, "create it", error);
    const created = error.created as C;
    const message = explain(keyed.label, "read it back after creating it", error.cause).message;
    throw new PartialFailure(message, created.id, { ...toState(created, created) } as Record<string, unknown>);
  }
}
