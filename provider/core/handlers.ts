import * as pulumi from "@pulumi/pulumi";
import { ProxyError } from "../../sdk";
import { type CheckFailure, checkInputs } from "./check";
import type { ProviderContext } from "./context";
import { type Descriptor, diffOf, PLUMBING_INPUTS, upgradeState } from "./descriptor";
import { explain } from "./errors";
import { IDENTITY_INPUT } from "./idempotency";

/**
 * The lifecycle of one kind as either front calls it: the dynamic stubs through provider/runtime.ts, the
 * native plugin through native/kinds.ts. Each method runs the kind's descriptor and rules, and
 * words a failure for the user.
 */

export type Handler = Required<Omit<pulumi.dynamic.ResourceProvider, "configure">>;
type Props = Record<string, unknown> | undefined;

const VERBS: Record<keyof Handler, string> = {
  check: "check its inputs",
  diff: "compare it with its state",
  create: "create it",
  read: "refresh it",
  update: "update it",
  delete: "delete it",
};

/**
 * The methods the serialized stubs call, over one kind's descriptor, with the process's context and
 * the question `check` asks once the inputs are valid: why the credentials cannot work, if they cannot.
 */
export function handlerFor(
  descriptor: Descriptor,
  context: () => ProviderContext,
  credentialsProblem: () => Promise<string | undefined>,
): Handler {
  const upgrade = (props: Props) => upgradeState(descriptor, props ?? {});
  const { rules } = descriptor;
  const handler: Handler = {
    async check(olds: Props, news: Record<string, unknown>) {
      const checked = checkInputs(descriptor.inputs, news, (inputs) => rules.refine?.(inputs, upgrade(olds)) ?? []);
      if (checked.failures) return { failures: checked.failures.map((failure) => shownBy(failure, news)) };
      // Bad inputs cost no request; valid ones are refused here when the credentials cannot work.
      const problem = await credentialsProblem();
      if (problem) return { failures: [{ property: "", reason: problem }] };
      return checked.inputs ? { inputs: { ...checked.inputs, ...plumbingOf(news) } } : checked;
    },
    async diff(_id: string, olds: Props, news: Record<string, unknown>) {
      const state = upgrade(olds);
      for (const advice of rules.advice?.(state, news) ?? []) pulumi.log.warn(advice);
      const { updates, replaces } = diffOf(descriptor, state, news);
      return { changes: updates.length + replaces.length > 0, replaces, deleteBeforeReplace: false };
    },
    create: (inputs: Record<string, unknown>) => rules.create(context(), inputs),
    async read(id: string, olds: Props) {
      const found = await rules.read(context(), id, upgrade(olds));
      if (!found) return {};
      // State written before the identity left the outputs keeps it through a refresh, so upgrading
      // the package shows no change on refresh; the next update drops it.
      const kept = olds?.[IDENTITY_INPUT];
      return { id, props: kept === undefined ? found : { ...found, [IDENTITY_INPUT]: kept } };
    },
    update: async (id: string, olds: Props, news: Record<string, unknown>) => ({
      outs: await rules.update(context(), id, upgrade(olds), news),
    }),
    delete: (id: string, olds: Props) => rules.delete(context(), id, upgrade(olds)),
  };
  return explainFailures(descriptor, handler);
}

/** The hidden inputs a program declared (identity, name), kept through `check` for the rules. */
function plumbingOf(news: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    PLUMBING_INPUTS.flatMap((key) => (typeof news[key] === "string" ? [[key, news[key]]] : [])),
  );
}

/**
 * The engine prints a failure as "property P value {inputs[P]} has a problem: R", and reads the value
 * at the top level only, so a nested path (`limits.dailyGb`) or a missing input printed `{<nil>}`.
 * Each reason already names the field, its bound and what it got; those failures are given to the
 * engine without a property, which it prints as "resource 'x' has a problem: R".
 */
function shownBy(failure: CheckFailure, news: Record<string, unknown>): CheckFailure {
  return news[failure.property] === undefined ? { property: "", reason: failure.reason } : failure;
}

/**
 * Every failure leaves the provider worded by `explain`: it names the resource and the fix, and it is
 * one line where the host would otherwise print a stack trace (a refresh with the API down, say).
 */
function explainFailures(descriptor: Descriptor, handler: Handler): Handler {
  const wrapped = {} as Record<keyof Handler, (...args: unknown[]) => Promise<unknown>>;
  for (const method of Object.keys(VERBS) as (keyof Handler)[]) {
    const call = handler[method] as (...args: unknown[]) => Promise<unknown>;
    wrapped[method] = async (...args) => {
      try {
        return await call(...args);
      } catch (error) {
        // The rules word their own errors; an SDK error that got past them is worded here.
        if (!(error instanceof ProxyError)) throw error;
        throw explain(labelOf(descriptor, args), VERBS[method], error);
      }
    };
  }
  return wrapped as unknown as Handler;
}

/** The resource the call is about, from whichever of its property bags names it. */
function labelOf(descriptor: Descriptor, args: unknown[]): string {
  const bags = args.filter((arg): arg is Record<string, unknown> => typeof arg === "object" && arg !== null);
  return descriptor.label(Object.assign({}, ...bags.reverse()));
}
