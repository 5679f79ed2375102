import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
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
 * A replayed create answer must carry the secret or password it first carried, yet the server keeps
 * no secret at rest. So the body is sealed (AES-256-GCM) under a key derived from the caller's own
 * secret, which the server holds only as a hash: the ledger and the state file are unreadable without it.
 */
function sealingKey(callerSecret: string, slot: string): Buffer {
  return Buffer.from(hkdfSync("sha256", callerSecret, slot, "pulumi-proxy idempotent replay", 32));
}

function seal(text: string, callerSecret: string, slot: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(callerSecret, slot), iv);
  const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64");
}

function unseal(sealed: string, callerSecret: string, slot: string): string | undefined {
  const bytes = Buffer.from(sealed, "base64");
  try {
    const decipher = createDecipheriv("aes-256-gcm", sealingKey(callerSecret, slot), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}

export interface Replay {
  status: number;
  body: string | undefined;
}

/**
 * First answers per (API key, idempotency key). Only committed successes are recorded, at commit
 * time and before the reply is written, so a retry after a lost reply replays instead of redoing.
 */
export class IdempotencyLedger {
  private lastSweep = 0;

  constructor(private readonly store: Store) {}

  /** The first answer to replay, undefined to go ahead, or a 409 when the request differs. */
  find(
    keyId: string,
    callerSecret: string,
    idempotencyKey: string,
    fingerprint: string,
    now: number,
  ): Replay | undefined {
    this.sweep(now);
    const slot = IdempotencyLedger.slot(keyId, idempotencyKey);
    const record = this.store.idempotency.get(slot);
    if (record === undefined || now - record.createdAt >= IDEMPOTENCY_TTL_MS) return undefined;
    if (record.fingerprint !== fingerprint) {
      throw new ApiError("idempotency_key_reused", "This idempotency key was already used with a different request.");
    }
    if (record.sealedBody === null) return { status: record.status, body: undefined };
    const body = unseal(record.sealedBody, callerSecret, slot);
    if (body === undefined) {
      throw new ApiError(
        "idempotency_key_reused",
        "This idempotency key's first answer can only be replayed to the secret that sent the request.",
      );
    }
    return { status: record.status, body };
  }

  remember(
    keyId: string,
    callerSecret: string,
    idempotencyKey: string,
    fingerprint: string,
    reply: Replay,
    now: number,
  ): void {
    const slot = IdempotencyLedger.slot(keyId, idempotencyKey);
    const sealedBody = reply.body === undefined ? null : seal(reply.body, callerSecret, slot);
    const record: IdempotencyRecord = { fingerprint, status: reply.status, sealedBody, createdAt: now };
    this.store.idempotency.set(slot, record);
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
