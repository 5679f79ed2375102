import { z } from "zod";
import { WireErrorCode } from "./errors";

/**
 * Wire-format building blocks shared by every API area. Response schemas are plain objects, so unknown
 * fields the real service may add are accepted (and dropped); request schemas are strict, because the
 * contract answers an unknown request field with a 400 that names it.
 */

export const TOKEN_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function prefixedId(prefix: string) {
  return z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9]{6,64}$`), `must look like ${prefix}_<token>`);
}

/** How each object's id starts: `pu_…`, `key_…`; the docs' import examples read them here. */
export const ID_PREFIXES = { proxyUser: "pu", apiKey: "key", allocation: "alloc", charge: "ch" } as const;

export const ProxyUserId = prefixedId(ID_PREFIXES.proxyUser);
export const ApiKeyId = prefixedId(ID_PREFIXES.apiKey);
export const AllocationId = prefixedId(ID_PREFIXES.allocation);
export const ChargeId = prefixedId(ID_PREFIXES.charge);
export const RequestId = z.string().min(1);

/** A live secret: `live_` followed by at least 32 base62 characters. */
export const SecretPattern = /^live_[A-Za-z0-9]{32,}$/;

export const Timestamp = z.iso.datetime({ offset: false });
export const CalendarDate = z.iso.date();

export const ErrorDetails = z.record(z.string(), z.unknown());
export const ValidationIssue = z.object({ path: z.string(), message: z.string() });

export const ErrorBody = z.object({
  error: z.object({
    code: WireErrorCode,
    message: z.string(),
    request_id: z.string(),
    details: ErrorDetails.optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export const LIST_LIMIT_MAX = 200;
export const LIST_LIMIT_DEFAULT = 50;

export const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(LIST_LIMIT_MAX).optional(),
  cursor: z.string().min(1).max(512).optional(),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** `{"<plural>": [...], "next_cursor": string | null}`, the shape of every list answer. */
export function listEnvelope<K extends string, T extends z.ZodType>(key: K, item: T) {
  return z.object({ [key]: z.array(item), next_cursor: z.string().nullable() } as {
    [P in K]: z.ZodArray<T>;
  } & { next_cursor: z.ZodNullable<z.ZodString> });
}

export const Currency = z.literal("usd");

/** Turns zod issues into the contract's `details.issues` list, paths dotted like `limits.daily_gb`. */
export function toWireIssues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((issue) => {
    const keys = issue.code === "unrecognized_keys" ? issue.keys : [];
    const base = issue.path.map(String).join(".");
    if (keys.length > 0) {
      const field = [base, keys[0]].filter(Boolean).join(".");
      return { path: field, message: `unknown field: ${keys.join(", ")}` };
    }
    return { path: base || "(body)", message: issue.message };
  });
}
