import { HOUR_MS } from "./clock";
import { ApiError, type WireIssue } from "./errors";
import type { IdempotencyRecord, Store } from "./store";
import { sha256Hex } from "./tokens";

export const IDEMPOTENCY_TTL_MS = 24 * HOUR_MS;
export const IDEMPOTENCY_KEY_MAX = 255;

export function idempotencyKeyIssue(value: string): WireIssue | null {
  if (value.length >= 1 && value.length <= IDEMPOTENCY_KEY_MAX) return null;
  return { path: "idempotency-key", message: `must be 1-${IDEMPOTENCY_KEY_MAX} characters` };
}

/** Key order and whitespace must not make the "same body" look different. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The same key on another path is a different request too, so the path is part of it. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return sha256Hex(`${method} ${path}\n${canonicalJson(body)}`);
}

/**
 * First answers per (API key, idempotency key). Only committed successes are recorded, at commit
 * time and before the reply is written, so a retry after a lost reply replays instead of redoing.
 */
export class IdempotencyLedger {
  private lastSweep = 0;

  constructor(private readonly store: Store) {}

  /** The recorded answer to replay, undefined to go ahead, or a 409 when the body differs. */
  find(keyId: string, idempotencyKey: string, fingerprint: string, now: number): IdempotencyRecord | undefined {
    this.sweep(now);
    const record = this.store.idempotency.get(IdempotencyLedger.slot(keyId, idempotencyKey));
    if (record === undefined || now - record.createdAt >= IDEMPOTENCY_TTL_MS) return undefined;
    if (record.fingerprint !== fingerprint) {
      throw new ApiError(409, "idempotency_key_reused", "This idempotency key was already used with a different request.");
    }
    return record;
  }

  remember(keyId: string, idempotencyKey: string, record: IdempotencyRecord): void {
    this.store.idempotency.set(IdempotencyLedger.slot(keyId, idempotencyKey), record);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < HOUR_MS) return;
    this.lastSweep = now;
    for (const [slot, record] of this.store.idempotency) {
      if (now - record.createdAt >= IDEMPOTENCY_TTL_MS) this.store.idempotency.delete(slot);
    }
  }

  private static slot(keyId: string, idempotencyKey: string): string {
    return `${keyId} ${idempotencyKey}`;
  }
}
