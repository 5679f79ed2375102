import type { OperationId } from "../../sdk/schemas/endpoints";
import type { KeyRecord, Store } from "../store";

export interface HandlerContext {
  readonly caller: KeyRecord;
  readonly params: Readonly<Record<string, string | undefined>>;
  /** Already parsed by the endpoint's query schema. */
  readonly query: unknown;
  /** Already parsed by the endpoint's body schema. */
  readonly body: unknown;
  readonly now: number;
  readonly store: Store;
  /** Secrets were retired: memoised hashes must not keep them alive. */
  secretsRetired(keyId: string, revoked: boolean): void;
}

/**
 * Handlers are synchronous on purpose: a request's checks and its state change happen in one turn of
 * the event loop, so two concurrent requests can never interleave between "check" and "commit".
 * The return value is the response body; the status comes from the endpoint table.
 */
export type Handler = (ctx: HandlerContext) => unknown;

export type HandlerTable<K extends OperationId> = { readonly [P in K]: Handler };

export function pathParam(ctx: HandlerContext, name: string): string {
  return ctx.params[name] ?? "";
}
