import type { OperationId } from "../../contract/endpoints";
import type { Endpoint } from "../../contract/operation";
import { invalidRequest, notFound } from "../errors";
import type { KeyRecord, Store } from "../store";

export interface HandlerContext {
  readonly caller: KeyRecord;
  /** The table's row for this request; its `pathParams` check the segments `pathParam` hands out. */
  readonly endpoint: Endpoint;
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

/**
 * A path segment, checked against the table's schema where the handler first needs it, so the order
 * of answers (scopes, body, then the object) stays the handler's. A malformed id is as unknown as
 * any other (404); a malformed `{ip}` is a 400 that says what it must look like.
 */
export function pathParam(ctx: HandlerContext, name: string): string {
  const value = ctx.params[name] ?? "";
  const param = ctx.endpoint.pathParams?.[name];
  if (!param) throw new Error(`${ctx.endpoint.operationId} has no path parameter ${name} in the endpoint table`);
  if (param.schema.safeParse(value).success) return value;
  throw param.malformed.code === "not_found"
    ? notFound(param.malformed.what)
    : invalidRequest([{ path: name, message: param.malformed.issue }]);
}
