import type { z } from "zod";
import { ENDPOINTS } from "../contract/endpoints";

const REDACTED = "[redacted]";
/** A value only a free-form string parameter accepts; no id, date, number or enum looks like it. */
const FREE_FORM_PROBE = "free-form probe, not an id, date, number or enum";

const staticSegments = new Set<string>();
const paramSchemas: z.ZodType[] = [];
const querySchemas = new Map<string, z.ZodType>();
for (const endpoint of ENDPOINTS as readonly {
  path: string;
  pathParams?: Record<string, { schema: z.ZodType }>;
  query?: z.ZodType;
}[]) {
  for (const segment of endpoint.path.split("/")) if (!segment.startsWith("{")) staticSegments.add(segment);
  for (const param of Object.values(endpoint.pathParams ?? {})) paramSchemas.push(param.schema);
  const shape = (endpoint.query as { shape?: Record<string, z.ZodType> } | undefined)?.shape ?? {};
  for (const [name, schema] of Object.entries(shape)) querySchemas.set(name, schema);
}

function keptSegment(segment: string): boolean {
  return staticSegments.has(segment) || paramSchemas.some((schema) => schema.safeParse(segment).success);
}

/** A known parameter whose value its schema accepts, unless the schema takes any string (a cursor could be anything). */
function keptQueryValue(name: string, value: string): boolean {
  const schema = querySchemas.get(name);
  return schema?.safeParse(value).success === true && !schema.safeParse(FREE_FORM_PROBE).success;
}

/**
 * A request path (and query) as the log and error messages may show it. A confused client can put a
 * password or an API key anywhere in a URL, so only what the contract defines is kept: the endpoint
 * table's fixed segments, path parameters its schemas accept (ids, IPv4 addresses), and query values
 * that are ids, dates, numbers or enums. Everything else is `[redacted]`.
 */
export function redactPath(pathAndQuery: string): string {
  const queryStart = pathAndQuery.indexOf("?");
  const path = queryStart < 0 ? pathAndQuery : pathAndQuery.slice(0, queryStart);
  const redactedPath = path
    .split("/")
    .map((segment) => (keptSegment(segment) ? segment : REDACTED))
    .join("/");
  if (queryStart < 0) return redactedPath;
  const query = pathAndQuery
    .slice(queryStart + 1)
    .split("&")
    .map((pair) => {
      const [name = "", value] = pair.split("=", 2);
      if (!querySchemas.has(name)) return REDACTED;
      return value === undefined ? name : `${name}=${keptQueryValue(name, value) ? value : REDACTED}`;
    });
  return `${redactedPath}?${query.join("&")}`;
}
