import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import * as schemas from "../../contract";
import { ENDPOINTS } from "../../contract/endpoints";
import { ERRORS, ErrorCode } from "../../contract/errors";
import { type Endpoint, errorCodesOf } from "../../contract/operation";

/**
 * openapi.json is generated, never written by hand: from ENDPOINTS and the zod wire schemas, the
 * same table the reference server routes and validates with. A test fails when the committed file
 * and a fresh build differ.
 */

type Json = Record<string, unknown>;

/** Exported schema → its exported name, so components get the names the SDK code uses. */
const SCHEMA_NAMES = new Map<z.ZodType, string>();
for (const [name, value] of Object.entries(schemas as Record<string, unknown>)) {
  // The first export wins, so an alias (ChargeListQuery = ListQuery) does not rename the original.
  if (value instanceof z.ZodType && !SCHEMA_NAMES.has(value)) SCHEMA_NAMES.set(value, name);
}

/** Answers may gain fields over time; clients must accept them, so the document does not forbid them. */
function allowExtraFields(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(allowExtraFields);
  if (node === null || typeof node !== "object") return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "additionalProperties" && value === false) continue;
    out[key] = allowExtraFields(value);
  }
  return out;
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Json;
  return io === "output" ? (allowExtraFields(rest) as Json) : rest;
}

/** Status → codes, in the enum's order. */
function byStatus(codes: Iterable<ErrorCode>): Map<string, ErrorCode[]> {
  const grouped = new Map<string, ErrorCode[]>();
  for (const code of ErrorCode.options.filter((known) => [...codes].includes(known))) {
    const status = String(ERRORS[code].status);
    grouped.set(status, [...(grouped.get(status) ?? []), code]);
  }
  return new Map([...grouped].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The codes an operation gets for what it is (any request, a body, a path segment, a POST), not for
 * its own rules: each status of them is one shared component response.
 */
const SHARED_ERRORS = byStatus(
  (ENDPOINTS as readonly Endpoint[]).flatMap((endpoint) => errorCodesOf({ ...endpoint, errors: [] })),
);

const RATE_HEADERS = {
  "x-ratelimit-limit": { $ref: "#/components/headers/RateLimitLimit" },
  "x-ratelimit-remaining": { $ref: "#/components/headers/RateLimitRemaining" },
  "x-ratelimit-reset": { $ref: "#/components/headers/RateLimitReset" },
  "x-request-id": { $ref: "#/components/headers/RequestId" },
};

function schemaRef(schema: z.ZodType, io: "input" | "output", components: Json): Json {
  const name = SCHEMA_NAMES.get(schema);
  if (name === undefined) return jsonSchema(schema, io);
  components[name] ??= jsonSchema(schema, io);
  return { $ref: `#/components/schemas/${name}` };
}

function buildOperation(endpoint: Endpoint, components: Json): Json {
  const parameters: Json[] = [];
  for (const [, name] of endpoint.path.matchAll(/\{(\w+)\}/g)) {
    const param = name === undefined ? undefined : endpoint.pathParams?.[name];
    if (!param) throw new Error(`no schema for the path parameter ${name} of ${endpoint.path}`);
    parameters.push({
      name,
      in: "path",
      required: true,
      description: param.description,
      schema: jsonSchema(param.schema, "input"),
    });
  }
  if (endpoint.query) {
    const query = jsonSchema(endpoint.query, "input") as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: "query", required: query.required?.includes(name) ?? false, schema });
    }
  }
  if (endpoint.method === "POST") parameters.push({ $ref: "#/components/parameters/IdempotencyKey" });

  const success: Json = { description: endpoint.summary, headers: { ...RATE_HEADERS } };
  if (endpoint.method === "POST")
    (success.headers as Json)["idempotent-replayed"] = { $ref: "#/components/headers/IdempotentReplayed" };
  if (endpoint.response)
    success.content = { "application/json": { schema: schemaRef(endpoint.response, "output", components) } };
  const responses: Json = { [String(endpoint.status)]: success };
  for (const [status, codes] of byStatus(errorCodesOf(endpoint))) {
    const shared = SHARED_ERRORS.get(status);
    responses[status] =
      shared?.join() === codes.join()
        ? { $ref: `#/components/responses/Error${status}` }
        : errorResponse(status, codes);
  }

  const always = endpoint.scopes.length > 0 ? endpoint.scopes.join(", ") : "none always";
  const operation: Json = {
    operationId: endpoint.operationId,
    summary: endpoint.summary,
    description: `Scopes: ${always}${endpoint.scopeNote ? ` (${endpoint.scopeNote})` : ""}.`,
    "x-required-scopes": [...endpoint.scopes],
    parameters,
  };
  if (endpoint.body) {
    const body = endpoint.body as z.ZodType;
    operation.requestBody = {
      required: !body.safeParse({}).success,
      content: { "application/json": { schema: schemaRef(body, "input", components) } },
    };
  }
  operation.responses = responses;
  return operation;
}

function errorResponse(status: string, codes: readonly ErrorCode[]): Json {
  const headers: Json = status === "401" ? { "x-request-id": RATE_HEADERS["x-request-id"] } : { ...RATE_HEADERS };
  if (status === "429") headers["retry-after"] = { $ref: "#/components/headers/RetryAfter" };
  return {
    description: codes.map((code) => `\`${code}\`: ${ERRORS[code].meaning}`).join(" "),
    headers,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } },
  };
}

const integerHeader = (description: string, minimum: number): Json => ({
  description,
  schema: { type: "integer", minimum },
});

export function buildOpenApiDocument(): Json {
  const componentSchemas: Json = { ErrorBody: jsonSchema(schemas.ErrorBody, "output") };
  const paths: Record<string, Json> = {};
  for (const endpoint of ENDPOINTS as readonly Endpoint[]) {
    paths[endpoint.path] ??= {};
    (paths[endpoint.path] as Json)[endpoint.method.toLowerCase()] = buildOperation(endpoint, componentSchemas);
  }
  const responses: Json = {};
  for (const [status, codes] of SHARED_ERRORS) responses[`Error${status}`] = errorResponse(status, codes);
  return {
    openapi: "3.1.0",
    info: {
      title: "Proxy service management API",
      version: "v1",
      description: [
        "Management interface of the proxy service: proxy users, traffic limits, IP allocation and replacement, API keys, usage and billing.",
        "Every request sends `authorization: Bearer <secret>`; secrets look like `live_<32+ base62>`.",
        "Rate limit: per API key (all its secrets share one budget), fixed 60-second windows, 600 requests per window by default.",
        "Lists take `limit` (1-200, default 50) and an opaque `cursor`, and answer `next_cursor` (null at the end); walks are stable under concurrent creates.",
        "Any POST may carry `idempotency-key` (1-255 characters, per API key, 24 hours): the same body replays the first successful answer with `idempotent-replayed: true`; a different body is a 409.",
        'Errors: `{"error": {code, message, request_id, details?}}`; every answer carries `x-request-id`.',
      ].join("\n\n"),
    },
    servers: [{ url: "{base_url}", variables: { base_url: { default: "http://127.0.0.1:8787" } } }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key secret, `live_<token>`." },
      },
      schemas: componentSchemas,
      parameters: {
        IdempotencyKey: {
          name: "idempotency-key",
          in: "header",
          required: false,
          description: "Makes a POST safe to retry: per API key, kept 24 hours.",
          schema: { type: "string", minLength: 1, maxLength: 255 },
        },
      },
      headers: {
        RequestId: { description: "Identifies the request; equals `error.request_id`.", schema: { type: "string" } },
        RateLimitLimit: integerHeader("Requests allowed per 60-second window for this API key.", 1),
        RateLimitRemaining: integerHeader("Requests left in the current window.", 0),
        RateLimitReset: integerHeader("Whole seconds until the window resets.", 1),
        RetryAfter: integerHeader("Whole seconds to wait before retrying.", 1),
        IdempotentReplayed: {
          description: "`true` when the answer replays the first one for this idempotency key.",
          schema: { type: "string", enum: ["true"] },
        },
      },
      responses,
    },
  };
}

export function renderOpenApiJson(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}

if (require.main === module) {
  // Run compiled (`npm run openapi`), from dist/docs/generate/: three folders below the root.
  const target = resolve(__dirname, "..", "..", "..", "openapi.json");
  writeFileSync(target, renderOpenApiJson());
  process.stdout.write(`wrote ${target}\n`);
}
