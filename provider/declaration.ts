import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { type CheckFailure, checkInputs } from "./check";
import { refuseBadSettings, refusePlaintextApiKey } from "./credentials";
import { IDENTITY_INPUT, identityOf, resourceIdentity } from "./idempotency";

/**
 * One declaration per resource: a zod field per input (bounds, messages, defaults, normalization,
 * built from the SDK's wire schemas, so the provider refuses exactly what the API would) and a zod
 * field per output. The Args type, `check`, the outputs the constructor registers and their types on
 * the class, and the reading of state written by earlier releases all derive from these two.
 */
export interface Declaration<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> {
  /** One field per input. A plain object, so that the JSDoc of each field reaches the Args type. */
  inputs: I;
  /** One field per output the resource exposes. */
  outputs: O;
  /** Outputs stored encrypted and shown as [secret]. */
  secretOutputs: readonly string[];
  /**
   * Outputs the service changes by itself (its clock, its monitoring, a write's timestamp), not what
   * anyone declared or set: a refresh records them, and drift does not report them, or a scheduled
   * drift check would fail on a renewal or a grace period running out.
   */
  statusOutputs: readonly string[];
}

export function declareResource<I extends z.ZodRawShape, O extends z.ZodRawShape>(
  declaration: Declaration<I, O> & {
    secretOutputs: readonly (keyof O & string)[];
    statusOutputs: readonly (keyof O & string)[];
  },
): Declaration<I, O> {
  return declaration;
}

/** Each resource class's declaration by its type token (`proxy:ProxyUser`), for tools that read state. */
const declared = new Map<string, Declaration>();

/** The status outputs of a type token (`proxy:ProxyUser`); none for a type this package does not declare. */
export function statusOutputsOf(type: string): readonly string[] {
  return declared.get(type)?.statusOutputs ?? [];
}

/** A trigger input: any change of its value starts an action. Config set by `--path` may make it a number. */
export const Trigger = z.union([z.string(), z.number()], { error: "must be text or a number" }).transform(String);

/** A user may pass each input as a value, a promise or an output; each element of a list too. */
type InputOf<T> = [T] extends [readonly (infer E)[] | undefined] ? pulumi.Input<pulumi.Input<E>[]> : pulumi.Input<T>;

type InputShape<D extends Declaration> = z.ZodObject<D["inputs"]>;

export type ArgsOf<D extends Declaration> = { [K in keyof z.input<InputShape<D>>]: InputOf<z.input<InputShape<D>>[K]> };

export type OutputsOf<D extends Declaration> = {
  readonly [K in keyof OutputValues<D>]-?: pulumi.Output<OutputValues<D>[K]>;
};

/** The inputs `check` returns: validated, normalized, defaults filled in. */
export type InputsOf<D extends Declaration> = z.output<InputShape<D>>;

type OutputValues<D extends Declaration> = z.output<z.ZodObject<D["outputs"]>>;

/** What state stores: the inputs, and every output (`null` where the API has no value). */
export type StoredOf<D extends Declaration> = Omit<InputsOf<D>, keyof OutputValues<D>> & OutputValues<D>;

/** Old state as the rules see it, upgraded: where an input is also an output, read as the input. */
export type StateOf<D extends Declaration> = InputsOf<D> & Omit<OutputValues<D>, keyof InputsOf<D>>;

/**
 * The resource class of a declaration. Its constructor registers every declared output, so
 * `resource.<output>` exists even when the matching input was omitted, overlaid by the args; since
 * state carries every one of them (null where unset), none shows as unknown in a preview.
 *
 * Exported as it is (`export const ProxyUser = resourceClass(…)`), not subclassed: a subclass adds a
 * constructor frame to the stack trace the engine stores with every resource, and the engine
 * rewrites every resource's state after every step.
 */
export function resourceClass<D extends Declaration>(
  declaration: D,
  provider: pulumi.dynamic.ResourceProvider,
  type: string,
): new (
  name: string,
  args: ArgsOf<D>,
  opts?: pulumi.CustomResourceOptions,
) => pulumi.dynamic.Resource & OutputsOf<D> {
  declared.set(`proxy:${type}`, declaration);
  const outputs = Object.fromEntries(Object.keys(declaration.outputs).map((key) => [key, undefined]));
  const secrets = declaration.secretOutputs;
  const resource = class extends pulumi.dynamic.Resource {
    constructor(name: string, args: ArgsOf<D>, opts?: pulumi.CustomResourceOptions) {
      refusePlaintextApiKey();
      refuseBadSettings();
      const additionalSecretOutputs = [...secrets, ...(opts?.additionalSecretOutputs ?? [])];
      // Hidden input: who this resource is, for idempotency keys that survive a crash (idempotency.ts).
      const identity = { [IDENTITY_INPUT]: resourceIdentity(`proxy:${type}`, name, opts?.parent) };
      super(provider, name, { ...outputs, ...args, ...identity }, { ...opts, additionalSecretOutputs }, "proxy", type);
    }
  };
  Object.defineProperty(resource, "name", { value: type });
  return resource as never;
}

/**
 * State to store: the inputs, then the outputs (which win where both name a property). Absent
 * inputs are left out: the engine's wire format has no "undefined". The hidden identity stays an
 * input only: every write it keys starts from the inputs, and the engine rewrites the whole state
 * after every step, so each byte a resource stores is paid for once per step of the stack.
 */
export function stateOf<D extends Declaration>(
  _declaration: D,
  inputs: InputsOf<D>,
  outputs: OutputValues<D>,
): StoredOf<D> {
  const state = Object.entries({ ...inputs, ...outputs }).filter(
    ([key, value]) => value !== undefined && key !== IDENTITY_INPUT,
  );
  return Object.fromEntries(state) as StoredOf<D>;
}

/**
 * State written by any release, read as today's: each property is parsed by its field of the
 * declaration, which fills today's defaults and normalizes inputs as `check` does, so old and new
 * inputs compare like with like. null and absent both mean "not set": an optional input reads as
 * absent, a nullable output as null. A value today's schema refuses is kept: reading never fails.
 */
export function upgradeState<D extends Declaration>(declaration: D, props: Record<string, unknown>): StateOf<D> {
  const state: Record<string, unknown> = { ...props };
  const fields = [...Object.entries(declaration.outputs), ...Object.entries(declaration.inputs)];
  for (const [key, field] of fields as [string, z.ZodType][]) {
    let parsed = field.safeParse(state[key]);
    if (!parsed.success && state[key] == null) parsed = field.safeParse(state[key] === null ? undefined : null);
    if (!parsed.success) continue;
    if (parsed.data === undefined) delete state[key];
    else state[key] = parsed.data;
  }
  return state as StateOf<D>;
}

type Upgraded<D extends Declaration> = Partial<StateOf<D>> & Record<string, unknown>;

/** What a resource writes by hand: its domain rules. Old state reaches it already upgraded. */
export interface ResourceRules<D extends Declaration> {
  /** Rules that span inputs or depend on the old ones; runs once every input is valid and known. */
  refine?(news: InputsOf<D>, olds: StateOf<D>): CheckFailure[];
  /** Which changed properties update in place and which replace the resource. */
  diff(olds: StateOf<D>, news: InputsOf<D>): { updates: string[]; replaces: string[] };
  create(inputs: InputsOf<D>): Promise<pulumi.dynamic.CreateResult<StoredOf<D>>>;
  read(id: string, olds: StateOf<D>): Promise<pulumi.dynamic.ReadResult<StoredOf<D>>>;
  update(id: string, olds: StateOf<D>, news: InputsOf<D>): Promise<pulumi.dynamic.UpdateResult<StoredOf<D>>>;
  delete(id: string, olds: StateOf<D>): Promise<void>;
}

export type Handler = Required<Omit<pulumi.dynamic.ResourceProvider, "configure">>;

/** The methods the serialized stubs call (`handlers[kind][method]`), over one resource's rules. */
export function handlerFor<D extends Declaration>(declaration: D, rules: ResourceRules<D>): Handler {
  const upgrade = (props: Upgraded<D> | undefined) => upgradeState(declaration, props ?? {});
  return {
    async check(olds: Upgraded<D>, news: Record<string, unknown>) {
      const checked = checkInputs(
        declaration.inputs,
        news,
        (inputs) => rules.refine?.(inputs as InputsOf<D>, upgrade(olds)) ?? [],
      );
      const identity = identityOf(news);
      return checked.inputs && identity ? { inputs: { ...checked.inputs, [IDENTITY_INPUT]: identity } } : checked;
    },
    async diff(_id: string, olds: Upgraded<D>, news: InputsOf<D>) {
      const { updates, replaces } = rules.diff(upgrade(olds), news);
      return { changes: updates.length + replaces.length > 0, replaces, deleteBeforeReplace: false };
    },
    create: (inputs: InputsOf<D>) => rules.create(inputs),
    async read(id: string, olds: Upgraded<D>) {
      const found = await rules.read(id, upgrade(olds));
      // State written before the identity left the outputs keeps it through a refresh, so upgrading
      // the package shows no change on refresh; the next update drops it.
      const kept = olds?.[IDENTITY_INPUT];
      return found.props && kept !== undefined
        ? { ...found, props: { ...found.props, [IDENTITY_INPUT]: kept } }
        : found;
    },
    update: (id: string, olds: Upgraded<D>, news: InputsOf<D>) => rules.update(id, upgrade(olds), news),
    delete: (id: string, olds: Upgraded<D>) => rules.delete(id, upgrade(olds)),
  };
}
