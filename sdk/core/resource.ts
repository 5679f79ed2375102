import type { z } from "zod";
import { ENDPOINTS, type OperationId } from "../../contract/endpoints";
import type { Endpoint } from "../../contract/operation";
import { type Page, PagePromise } from "./pagination";
import { resolvePath } from "./path";
import type { QueryValue, RequestOptions, Transport } from "./transport";

type EndpointOf<Id extends OperationId> = Extract<(typeof ENDPOINTS)[number], { operationId: Id }>;

/** What the operation answers, as its response schema parses it; nothing for a 204. */
export type ResponseOf<Id extends OperationId> =
  EndpointOf<Id> extends { response: infer R extends z.ZodType } ? z.output<R> : undefined;

/** Path segments by the names the table gives them, a body and a query when the operation takes them. */
export type InputOf<Id extends OperationId> = (EndpointOf<Id> extends { pathParams: infer P }
  ? { path: { readonly [K in keyof P]: string } }
  : { path?: never }) &
  (EndpointOf<Id> extends { body: infer B extends z.ZodType } ? { body?: z.output<B> } : { body?: never }) &
  (EndpointOf<Id> extends { query: z.ZodType } ? { query?: object | undefined } : { query?: never });

/** The operations that answer a list envelope `{<plural>: [...], next_cursor}`. */
export type ListOperationId = {
  [Id in OperationId]: ResponseOf<Id> extends { next_cursor: string | null } ? Id : never;
}[OperationId];

/** One element of a list operation's `<plural>` array. */
export type ItemOf<Id extends ListOperationId> = ResponseOf<Id>[Exclude<
  keyof ResponseOf<Id>,
  "next_cursor"
>] extends readonly (infer T)[]
  ? T
  : never;

const BY_ID = new Map<string, Endpoint>(ENDPOINTS.map((endpoint) => [endpoint.operationId, endpoint]));

/**
 * Base of every API area (`client.proxyUsers`, …): each method names its operation id, and method,
 * path, path segments and the response schema come from the endpoint table through `send`.
 */
export abstract class ApiResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  protected send<Id extends OperationId>(
    operationId: Id,
    input: InputOf<Id>,
    options: RequestOptions | undefined,
  ): Promise<ResponseOf<Id>> {
    const endpoint = endpointFor(operationId);
    const { path, body, query } = input as { path?: Record<string, string>; body?: unknown; query?: object };
    return this.#transport.call(
      {
        method: endpoint.method,
        path: resolvePath(endpoint.path, path ?? {}),
        query: query === undefined ? undefined : toQuery(query),
        body,
        schema: endpoint.response as z.ZodType<ResponseOf<Id>> | undefined,
      },
      options,
    );
  }

  /**
   * A list operation as a PagePromise: the envelope is validated with the table's schema and turned
   * into `{items, nextCursor}`. A cursor in the query starts the walk there.
   */
  protected paginate<Id extends ListOperationId>(
    operationId: Id,
    query: { cursor?: string | undefined } | undefined,
    options: RequestOptions | undefined,
  ): PagePromise<ItemOf<Id>> {
    const endpoint = endpointFor(operationId);
    const schema = endpoint.response as z.ZodObject;
    const key = Object.keys(schema.shape).find((name) => name !== "next_cursor") as string;
    const base = toQuery(query);
    return new PagePromise<ItemOf<Id>>(async (cursor): Promise<Page<ItemOf<Id>>> => {
      const envelope = (await this.#transport.call(
        { method: endpoint.method, path: endpoint.path, query: { ...base, cursor }, schema },
        options,
      )) as Record<string, unknown> & { next_cursor: string | null };
      return { items: envelope[key] as ItemOf<Id>[], nextCursor: envelope.next_cursor };
    }, query?.cursor);
  }
}

function endpointFor(operationId: OperationId): Endpoint {
  const endpoint = BY_ID.get(operationId);
  if (!endpoint) throw new Error(`no operation ${operationId} in the endpoint table`);
  return endpoint;
}

/** Query values as the wire sends them; absent and non-scalar ones are left out. */
function toQuery(query: object | undefined): Record<string, QueryValue> {
  const out: Record<string, QueryValue> = {};
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") continue;
    out[name] = value;
  }
  return out;
}
