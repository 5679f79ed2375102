import type { z } from "zod";
import { type Page, PagePromise } from "../core/pagination";
import type { QueryValue, RequestOptions, Transport } from "../core/transport";

/**
 * A list endpoint as a PagePromise: the envelope `{<plural>: [...], next_cursor}` is validated with
 * the shared schema and turned into `{items, nextCursor}`. A cursor in the query starts the walk there.
 */
export function listPages<T, Q extends { cursor?: string | undefined }>(
  transport: Transport,
  path: string,
  key: string,
  schema: z.ZodType<Record<string, unknown> & { next_cursor: string | null }>,
  query: Q | undefined,
  options: RequestOptions | undefined,
): PagePromise<T> {
  const base = toQuery(query);
  return new PagePromise<T>(async (cursor): Promise<Page<T>> => {
    const envelope = await transport.call({ method: "GET", path, query: { ...base, cursor }, schema }, options);
    return { items: envelope[key] as T[], nextCursor: envelope.next_cursor };
  }, query?.cursor);
}

export function toQuery(query: object | undefined): Record<string, QueryValue> {
  const out: Record<string, QueryValue> = {};
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") continue;
    out[name] = value;
  }
  return out;
}
