import { SecretPattern } from "../contract/common";
import type { Scope } from "../contract/keys";
import { ApiError } from "./errors";
import { livePrevious } from "./render";
import type { KeyRecord, Store } from "./store";
import { sha256Hex } from "./tokens";

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * Bearer → sha256, memoised so the hot path hashes a client's secret once, not on every request.
 * Only secrets that proved a key are held (see {@link remember}), never persisted, and the whole memo
 * is dropped whenever any secret is retired, so it never outlives the secret it was made for by
 * much. A wrong secret is hashed and forgotten: kept, 10,000 of them up to 14 KB each took the
 * server from 129 to 247 MiB, and a flood of them churned out the ones that work.
 */
export class SecretHasher {
  private readonly memo = new Map<string, string>();

  constructor(private readonly capacity = 10_000) {}

  hash(secret: string): string {
    return this.memo.get(secret) ?? sha256Hex(secret);
  }

  /** The secret proved a key: its hash is kept for its next request. */
  remember(secret: string, hash: string): void {
    if (this.memo.has(secret)) return;
    if (this.memo.size >= this.capacity) this.memo.clear();
    this.memo.set(secret, hash);
  }

  /** Secrets held now. */
  get size(): number {
    return this.memo.size;
  }

  forgetAll(): void {
    this.memo.clear();
  }
}

export interface Authenticated {
  key: KeyRecord;
  /** Kept only for the request's lifetime: idempotent replays are sealed with a key derived from it. */
  secret: string;
}

/** Resolves the Authorization header to a key, or throws the contract's 401. Never echoes the secret. */
export function authenticate(
  header: string | undefined,
  store: Store,
  hasher: SecretHasher,
  now: number,
): Authenticated {
  if (header === undefined || header === "") {
    throw new ApiError(
      "unauthenticated",
      "The request has no Authorization header; send Authorization: Bearer <API key secret>.",
    );
  }
  const secret = BEARER.exec(header)?.[1];
  if (secret === undefined || !SecretPattern.test(secret)) {
    throw new ApiError(
      "unauthenticated",
      "The Authorization header must be Bearer followed by an API key secret shaped like live_<token>.",
    );
  }
  const hash = hasher.hash(secret);
  const keyId = store.keyIdForSecretHash(hash);
  const key = keyId === undefined ? undefined : store.keys.get(keyId);
  const valid =
    key !== undefined &&
    (key.expiresAt === null || now < key.expiresAt) &&
    (key.current.hash === hash || livePrevious(key, now)?.hash === hash);
  if (!valid) throw new ApiError("invalid_api_key", "The API key is unknown, revoked or expired.");
  hasher.remember(secret, hash);
  return { key, secret };
}

export function hasScopes(key: KeyRecord, required: readonly Scope[]): boolean {
  for (const scope of required) if (!key.scopes.includes(scope)) return false;
  return true;
}

/** 403 listing every scope the operation needs, so the caller can mint a key that works in one go. */
export function requireScopes(key: KeyRecord, required: readonly Scope[]): void {
  if (hasScopes(key, required)) return;
  const missing = required.filter((scope) => !key.scopes.includes(scope));
  throw new ApiError(
    "insufficient_scope",
    `This API key lacks the scope ${missing.join(", ")} that this request needs.`,
    {
      required_scopes: [...required],
      missing_scopes: missing,
    },
  );
}
