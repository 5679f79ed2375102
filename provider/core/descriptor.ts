import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { CheckFailure } from "./check";
import type { Collection } from "./coalescer";
import type { ProviderContext } from "./context";
import { IDENTITY_INPUT } from "./idempotency";
import type { AccessEffects, CostItem, LiveAccount } from "./review";
import { same } from "./sameValue";

/**
 * The resource's name in the program, a hidden input like the identity: the rules' errors name the
 * resource a user declared (`IpAllocation "edge"`) where no input of theirs does. Input only: the
 * engine already knows a resource's name, so the state need not repeat it. Not `__name`: every
 * Pulumi resource object has that property, and an input of that name fails its construction.
 */
export const NAME_INPUT = "__declaredName";

/** Hidden inputs that `check` keeps for the rules and the state leaves out. */
export const PLUMBING_INPUTS: readonly string[] = [IDENTITY_INPUT, NAME_INPUT];

/** The declared name a property bag carries, if any. */
export const declaredName = (props: Record<string, unknown>): string | undefined =>
  typeof props[NAME_INPUT] === "string" ? (props[NAME_INPUT] as string) : undefined;

/**
 * One descriptor per resource kind: everything the dynamic resources, the native provider, the plan
 * and the drift command know of it. A zod field per input (bounds, messages, defaults and
 * normalization, built from the contract's wire schemas, so the provider refuses exactly what the API
 * would) carries what a change of it does; a zod field per output; the rules `up` runs, given the
 * provider context; the list its reads walk; and what a change means for a reviewer.
 */
export interface Descriptor<
  I extends z.ZodRawShape = z.ZodRawShape,
  O extends z.ZodRawShape = z.ZodRawShape,
  W extends { id: string } = { id: string },
> {
  /** The key of the serialized stubs (`handlers[kind]`). */
  kind: string;
  /** The type's name: `proxy:ProxyUser` for the dynamic resource, `proxy:index:ProxyUser` natively. */
  type: string;
  /** What the resource is, for the native schema and the generated SDKs' docs. */
  description: string;
  /**
   * One field per input, each documented with zod's `describe`: the native schema carries the text
   * into every generated SDK's docstrings and `pulumi import`'s code.
   */
  inputs: I;
  /** One field per output the resource exposes. */
  outputs: O;
  /** Example inputs, for the schema's example in each language. */
  example: z.input<z.ZodObject<I>>;
  /** Outputs stored encrypted and shown as [secret]. */
  secretOutputs: readonly string[];
  /**
   * Outputs the service changes by itself (its clock, its monitoring, a write's timestamp), not what
   * anyone declared or set: a refresh records them, and drift does not report them, or a scheduled
   * drift check would fail on a renewal or a grace period running out.
   */
  statusOutputs: readonly string[];
  /** The collection a refresh walks, so one list page answers up to 200 reads. */
  collection(client: ProviderContext["client"]): Collection<W>;
  /** `ProxyUser "scraper"`, for messages, from whatever the state or the inputs hold. */
  label(props: Record<string, unknown>): string;
  rules: KindRules<Descriptor<I, O, W>>;
  review: KindReview<Descriptor<I, O, W>>;
  /**
   * The dates in an object's recorded outputs at which it needs an `up` (a scheduled rotation) or
   * stops working (an expiry): what `plan`, `drift` and `report` warn of. Kinds without any omit it.
   */
  deadlines?(outputs: Record<string, unknown>): Deadline[];
}

export interface Deadline {
  event: "rotation" | "expiry";
  at: Date;
}

/** What a change of one input does: updates in place, replaces the resource, or nothing at all. */
export type Effect = "update" | "replace" | "none";
/** A change decided by a rule of the kind: it sees the whole old state and the new inputs. */
export type EffectRule = (olds: Record<string, unknown>, news: Record<string, unknown>) => Effect;

const effects = new WeakMap<z.core.$ZodType, Effect | EffectRule>();

/** Marks an input field: changing it replaces the resource. */
export function replaceOnChange<T extends z.ZodType>(field: T): T {
  effects.set(field, "replace");
  return field;
}

/** Marks an input field read only when the resource is created (adoptId): changing it later does nothing. */
export function createOnly<T extends z.ZodType>(field: T): T {
  effects.set(field, "none");
  return field;
}

/** Marks an input field whose effect a rule decides, from the old state and the new inputs. */
export function changeDecidedBy<T extends z.ZodType>(field: T, rule: EffectRule): T {
  effects.set(field, rule);
  return field;
}

/** What a change of this field does, and whether its effect depends on the state. */
export function effectOf(field: z.core.$ZodType): Effect | EffectRule {
  return effects.get(field) ?? "update";
}

/** A trigger input: any change of its value starts an action. Config set by `--path` may make it a number. */
export const Trigger = z.union([z.string(), z.number()], { error: "must be text or a number" }).transform(String);

/** Checks a descriptor's secret and status outputs name real outputs, at compile time. */
export function describeKind<
  const K extends string,
  I extends z.ZodRawShape,
  O extends z.ZodRawShape,
  W extends { id: string },
>(
  descriptor: Descriptor<I, O, W> & {
    kind: K;
    secretOutputs: readonly (keyof O & string)[];
    statusOutputs: readonly (keyof O & string)[];
  },
): Descriptor<I, O, W> & { kind: K } {
  return descriptor;
}

/** A user may pass each input as a value, a promise or an output; each element of a list too. */
type InputOf<T> = [T] extends [readonly (infer E)[] | undefined] ? pulumi.Input<pulumi.Input<E>[]> : pulumi.Input<T>;

type InputShape<D extends Descriptor> = z.ZodObject<D["inputs"]>;

export type ArgsOf<D extends Descriptor> = { [K in keyof z.input<InputShape<D>>]: InputOf<z.input<InputShape<D>>[K]> };

export type OutputsOf<D extends Descriptor> = {
  readonly [K in keyof OutputValues<D>]-?: pulumi.Output<OutputValues<D>[K]>;
};

/** The inputs `check` returns: validated, normalized, defaults filled in. */
export type InputsOf<D extends Descriptor> = z.output<InputShape<D>>;

export type OutputValues<D extends Descriptor> = z.output<z.ZodObject<D["outputs"]>>;

/** What state stores: the inputs, and every output (`null` where the API has no value). */
export type StoredOf<D extends Descriptor> = Omit<InputsOf<D>, keyof OutputValues<D>> & OutputValues<D>;

/** Old state as the rules see it, upgraded: where an input is also an output, read as the input. */
export type StateOf<D extends Descriptor> = InputsOf<D> & Omit<OutputValues<D>, keyof InputsOf<D>>;

/** The rules `up` runs for one kind. Old state reaches them already upgraded; the context is theirs to use. */
export interface KindRules<D extends Descriptor> {
  /** Rules that span inputs or depend on the old ones; runs once every input is valid and known. */
  refine?(news: InputsOf<D>, olds: StateOf<D>): CheckFailure[];
  /** Updates that no input's change explains (a secret that stopped working): listed by output. */
  extraUpdates?(olds: StateOf<D>): string[];
  /** What the diff warns about (a trigger that asks for nothing): the plan shows the same words. */
  advice?(olds: StateOf<D>, news: InputsOf<D>): string[];
  create(ctx: ProviderContext, inputs: InputsOf<D>): Promise<{ id: string; outs: StoredOf<D> }>;
  /** The object as the API holds it now; undefined when it is gone. */
  read(ctx: ProviderContext, id: string, olds: StateOf<D>): Promise<StoredOf<D> | undefined>;
  update(ctx: ProviderContext, id: string, olds: StateOf<D>, news: InputsOf<D>): Promise<StoredOf<D>>;
  delete(ctx: ProviderContext, id: string, olds: StateOf<D>): Promise<void>;
}

export interface KindDiff {
  updates: string[];
  replaces: string[];
}

/**
 * Which inputs update in place and which replace the resource, from each field's effect: the one diff
 * of the dynamic resources, the native provider (per property) and the plan.
 */
export function diffOf<D extends Descriptor>(descriptor: D, olds: StateOf<D>, news: InputsOf<D>): KindDiff {
  const diff: KindDiff = { updates: [], replaces: [] };
  const before = olds as Record<string, unknown>;
  const after = news as Record<string, unknown>;
  for (const [key, field] of Object.entries(descriptor.inputs) as [string, z.ZodType][]) {
    const effect = effectOf(field);
    const decided =
      typeof effect === "function" ? effect(before, after) : same(before[key], after[key]) ? "none" : effect;
    if (decided === "update") diff.updates.push(key);
    if (decided === "replace") diff.replaces.push(key);
  }
  diff.updates.push(...(descriptor.rules.extraUpdates?.(olds) ?? []));
  return diff;
}

/**
 * State to store: the inputs, then the outputs (which win where both name a property). Absent
 * inputs are left out: the engine's wire format has no "undefined". The hidden inputs stay inputs
 * only: every write the identity keys starts from the inputs, and the engine rewrites the whole state
 * after every step, so each byte a resource stores is paid for once per step of the stack.
 */
export function stateOf<D extends Descriptor>(inputs: InputsOf<D>, outputs: OutputValues<D>): StoredOf<D> {
  const state = Object.entries({ ...inputs, ...outputs }).filter(
    ([key, value]) => value !== undefined && !PLUMBING_INPUTS.includes(key),
  );
  return Object.fromEntries(state) as StoredOf<D>;
}

/**
 * State written by any release, read as today's: each property is parsed by its field of the
 * descriptor, which fills today's defaults and normalizes inputs as `check` does, so old and new
 * inputs compare like with like. null and absent both mean "not set": an optional input reads as
 * absent, a nullable output as null. A value today's schema refuses is kept: reading never fails.
 */
export function upgradeState<D extends Descriptor>(
  descriptor: Pick<D, "inputs" | "outputs">,
  props: Record<string, unknown>,
): StateOf<D> {
  return parseLeniently(props, [...Object.entries(descriptor.outputs), ...Object.entries(descriptor.inputs)]);
}

/** Inputs the engine reports (already checked, masked where secret), read as `check` returned them. */
export function readInputs<D extends Descriptor>(descriptor: D, props: Record<string, unknown>): InputsOf<D> {
  return parseLeniently(props, Object.entries(descriptor.inputs));
}

function parseLeniently<T>(props: Record<string, unknown>, fields: [string, unknown][]): T {
  const state: Record<string, unknown> = { ...props };
  for (const [key, field] of fields as [string, z.ZodType][]) {
    let parsed = field.safeParse(state[key]);
    if (!parsed.success && state[key] == null) parsed = field.safeParse(state[key] === null ? undefined : null);
    if (!parsed.success) continue;
    if (parsed.data === undefined) delete state[key];
    else state[key] = parsed.data;
  }
  return state as T;
}

export type ReviewOp = "create" | "update" | "replace" | "delete";

/** One resource the preview changes: its recorded state (upgraded) and its new inputs (checked). */
export interface ReviewChange<D extends Descriptor = Descriptor> {
  urn: string;
  name: string;
  op: ReviewOp;
  /** The resource id in state, for update, replace and delete. */
  id?: string;
  /** Absent for create. */
  olds?: StateOf<D>;
  /** Absent for delete. */
  news?: InputsOf<D>;
}

export interface KindReview<D extends Descriptor> {
  /** What the change means in the reviewer's words, e.g. "secret rotated, old one valid for 24 h". */
  notes(change: ReviewChange<D>): string[];
  /** Every charge the change makes, exactly as the API will charge it. */
  cost?(change: ReviewChange<D>, live: LiveAccount): Promise<CostItem[]>;
  /** Who gains or loses access. */
  access?(change: ReviewChange<D>, live: LiveAccount): Promise<Partial<AccessEffects>>;
}
