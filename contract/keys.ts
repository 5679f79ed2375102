import { z } from "zod";
import { ApiKeyId, ListQuery, listEnvelope, Timestamp } from "./common";

export const SCOPES = [
  "usage:read",
  "proxy-users:read",
  "proxy-users:write",
  "limits:write",
  "billing:read",
  "billing:write",
  "keys:write",
] as const;
/**
 * The scopes that spend the balance or mint keys: a key holding one is the one to guard (the plan's
 * access review, the policy's allow-list, a security finding in coverage and the report).
 */
export const SENSITIVE_SCOPES = ["billing:write", "keys:write"] as const satisfies readonly (typeof SCOPES)[number][];

export const Scope = z.enum(SCOPES, { error: `is not a scope; use one of ${SCOPES.join(", ")}` });
export type Scope = z.infer<typeof Scope>;

export const GRACE_HOURS_MAX = 168;
export const GRACE_HOURS_DEFAULT = 24;
export const KEY_NAME_MAX = 63;

export const Scopes = z
  .array(Scope)
  .min(1, "must list at least one scope")
  .refine((scopes) => new Set(scopes).size === scopes.length, "must not repeat a scope");

export const ApiKey = z.object({
  id: ApiKeyId,
  name: z.string(),
  scopes: z.array(z.string()),
  created_at: Timestamp,
  expires_at: Timestamp.nullable(),
  last_rotated_at: Timestamp.nullable(),
  previous_secret_expires_at: Timestamp.nullable(),
  secret_hint: z.string(),
});
export type ApiKey = z.infer<typeof ApiKey>;

/** Create and rotate answers are the only ones that carry the full secret. */
export const ApiKeyWithSecret = ApiKey.extend({ secret: z.string().min(1) });
export type ApiKeyWithSecret = z.infer<typeof ApiKeyWithSecret>;

export const CreateApiKeyBody = z.strictObject({
  name: z.string().min(1, "must not be empty").max(KEY_NAME_MAX, `must be at most ${KEY_NAME_MAX} characters`),
  scopes: Scopes,
  expires_at: Timestamp.optional(),
});
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

export const GraceHours = z
  .number()
  .int("must be a whole number of hours")
  .min(0, "must be at least 0")
  .max(GRACE_HOURS_MAX, `must be at most ${GRACE_HOURS_MAX}`);

export const RotateApiKeyBody = z.strictObject({ grace_hours: GraceHours.optional() });
export type RotateApiKeyBody = z.infer<typeof RotateApiKeyBody>;

export const ApiKeyListQuery = ListQuery;
export const ApiKeyList = listEnvelope("keys", ApiKey);
export type ApiKeyList = z.infer<typeof ApiKeyList>;
