import fs from "node:fs";

/**
 * Adoption after a killed run, for when the API no longer replays it.
 *
 * A killed `pulumi up` (with `PULUMI_SKIP_CHECKPOINTS`, a killed run records nothing at all) leaves
 * objects at the API that no state names. Within 24 hours the next run's creates carry the same
 * idempotency keys (idempotency.ts) and the API replays them. After 24 hours the API has forgotten
 * the keys, and a create would make a second key or a second (charged) allocation. So
 * `pulumi-proxy recover` hands the `up` it runs an adoption plan (a JSON file named by
 * `PULUMI_PROXY_ADOPTION_PLAN`): when the stack's last completed update ended, and every id the state
 * holds. An object created since then that the state does not hold was made by a killed run; a create
 * whose inputs it matches takes it over instead of creating (each kind's `create` says how), and no
 * two resources take the same object.
 */

export const ADOPTION_PLAN_ENV = "PULUMI_PROXY_ADOPTION_PLAN";

export interface AdoptionPlan {
  /** ISO 8601: objects created at or after this and not in `held` are a killed run's. */
  since: string;
  /** The ids the state holds. */
  held: string[];
}

/** Clock skew between the machine that wrote the state's history and the API: an object this much older still counts. */
export const ADOPTION_SKEW_MS = 2 * 60_000;

export class Adoption {
  readonly #since: number;
  /** Held by the state, or taken by a resource of this run. */
  readonly #taken: Set<string>;
  readonly #walks = new Map<string, Promise<unknown[]>>();

  constructor(plan: AdoptionPlan) {
    const since = Date.parse(plan.since);
    if (!Number.isFinite(since)) throw new Error(`${ADOPTION_PLAN_ENV}: "since" is not a time: ${plan.since}`);
    this.#since = since - ADOPTION_SKEW_MS;
    this.#taken = new Set(plan.held);
  }

  /**
   * An object of `kind` that a killed run made and that `matches`, now taken by the caller; undefined
   * when there is none. The list is walked once per kind, when first asked: what this run creates
   * later is its own.
   */
  async claim<T extends { id: string }>(
    kind: string,
    list: () => AsyncIterable<T>,
    createdAt: (object: T) => string,
    matches: (object: T) => boolean,
  ): Promise<T | undefined> {
    let walk = this.#walks.get(kind);
    if (!walk) {
      walk = collect(list());
      this.#walks.set(kind, walk);
    }
    const found = ((await walk) as T[]).find(
      (object) => !this.#taken.has(object.id) && Date.parse(createdAt(object)) >= this.#since && matches(object),
    );
    if (found) this.#taken.add(found.id);
    return found;
  }

  /** Records that a resource of this run holds `id`; false when another already does (a replay of an adopted object). */
  take(id: string): boolean {
    if (this.#taken.has(id)) return false;
    this.#taken.add(id);
    return true;
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** The plan `recover` left for this process, if any; a plan that cannot be read fails the run rather than risk a second create. */
export function adoptionFromEnvironment(env: NodeJS.ProcessEnv = process.env): Adoption | undefined {
  const file = env[ADOPTION_PLAN_ENV];
  if (!file) return undefined;
  let plan: AdoptionPlan;
  try {
    plan = JSON.parse(fs.readFileSync(file, "utf8")) as AdoptionPlan;
  } catch (error) {
    throw new Error(
      `${ADOPTION_PLAN_ENV} names ${file}, which cannot be read (${(error as Error).message}). It is written by \`pulumi-proxy recover\` for the run it starts; unset it, or run recover again.`,
    );
  }
  return new Adoption(plan);
}
