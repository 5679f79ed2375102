import type { IncomingMessage } from "node:http";
import { z } from "zod";
import { toWireIssues } from "../contract/common";
import { ApiError, invalidRequest } from "./errors";
import { BODY_LIMIT_BYTES, isJsonContentType, readBody } from "./http";
import { parseJsonBytes } from "./jsonText";

/**
 * What a request brings besides its path: its JSON body and its query, read and checked against the
 * endpoint's schemas. A failure is an ApiError naming the field, ready to be the answer.
 */

/** Body of the endpoints that take none: `{}` or nothing at all. */
export const NO_BODY = z.strictObject({});

/** A 413; when the body was not read to its end, the connection cannot carry another request. */
export class PayloadTooLarge extends ApiError {
  constructor(readonly drained: boolean) {
    super("payload_too_large", `The request body is larger than ${BODY_LIMIT_BYTES} bytes.`, {
      limit_bytes: BODY_LIMIT_BYTES,
    });
  }
}

export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const read = await readBody(req);
  if (read.kind === "aborted") throw new ApiError("invalid_request", "The request body was cut off.");
  if (read.kind === "too_large") {
    throw new PayloadTooLarge(read.drained);
  }
  if (read.bytes.length === 0) return {};
  if (!isJsonContentType(req.headers["content-type"])) {
    throw new ApiError(
      "unsupported_media_type",
      "Request bodies must be JSON, sent with content-type: application/json.",
    );
  }
  try {
    return parseJsonBytes(read.bytes);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw invalidRequest([{ path: "(body)", message: "is not valid JSON" }], "The request body is not valid JSON.");
  }
}

export function parseWith(schema: z.ZodType, input: unknown): unknown {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidRequest(toWireIssues(parsed.error));
  return parsed.data;
}

export function plainQuery(searchParams: Record<string, string | string[]>): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(searchParams)) {
    if (Array.isArray(value)) throw invalidRequest([{ path: name, message: "must be given at most once" }]);
    query[name] = value;
  }
  return query;
}
