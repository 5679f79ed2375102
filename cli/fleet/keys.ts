import { DAY_MS } from "../../contract/pricing";
import type { ApiKey, ProxyClient } from "../../sdk";
import { isNotFound } from "../../sdk";
import { type FleetSpec, SHARD_SCOPES, type Shard } from "./spec";

/** What the fleet did to a shard's key this run. */
export type KeyAction = "minted" | "rotated" | "kept";

export interface ShardKey {
  action: KeyAction;
  keyId: string;
  /** The new secret, when one was issued (minted or rotated): it goes to the stack's secret config at once. */
  secret?: string;
  /** Keys to revoke once the new secret is stored: the one it replaces, and any left by a run killed between minting and storing. */
  retire: string[];
  /** Why a new key was minted, or when the rotation was due. */
  reason: string;
}

const sameScopes = (key: ApiKey) => [...key.scopes].sort().join(" ") === [...SHARD_SCOPES].sort().join(" ");

/** When a key's secret is next due for rotation, by its last rotation (or its creation). */
export function rotationDue(key: ApiKey, rotateAfterDays: number): number {
  return Date.parse(key.last_rotated_at ?? key.created_at) + rotateAfterDays * DAY_MS;
}

/**
 * The key a shard runs with, by what its stack's config records (`fleet:keyId`) and what the account
 * holds (`accountKeys`, listed once per run with the admin key):
 *
 * - the recorded key exists with the shard's scopes and is not due: kept, nothing is written;
 * - it is due (`keys.rotateAfterDays` since its last rotation or creation): rotated in place, the old
 *   secret valid for `keys.graceHours`, so a run of the stack already under way keeps working;
 * - it is gone (revoked outside the fleet), holds other scopes, or none is recorded: a new key is
 *   minted with the shard's scopes and the old one retired.
 *
 * A secret is shown once, so a key the config does not record is useless; any such key with the
 * shard's name (a run killed after minting, before storing) is retired too, never reused.
 */
export async function shardKey(
  admin: ProxyClient,
  spec: FleetSpec,
  shard: Shard,
  recordedId: string | undefined,
  accountKeys: ApiKey[],
): Promise<ShardKey> {
  const recorded = accountKeys.find((key) => key.id === recordedId);
  const strays = (keep: string) =>
    accountKeys.filter((key) => key.name === shard.keyName && key.id !== keep).map((key) => key.id);
  if (recorded && sameScopes(recorded)) {
    const due = rotationDue(recorded, spec.keys.rotateAfterDays);
    if (due > Date.now()) {
      return { action: "kept", keyId: recorded.id, retire: strays(recorded.id), reason: "" };
    }
    const rotated = await admin.keys.rotate(recorded.id, { grace_hours: spec.keys.graceHours });
    return {
      action: "rotated",
      keyId: rotated.id,
      secret: rotated.secret,
      retire: strays(recorded.id),
      reason: `due ${new Date(due).toISOString()} (every ${spec.keys.rotateAfterDays} days)`,
    };
  }
  const minted = await admin.keys.create({ name: shard.keyName, scopes: SHARD_SCOPES });
  const reason = !recordedId
    ? "no key recorded"
    : !recorded
      ? `recorded key ${recordedId} is gone`
      : `recorded key holds ${recorded.scopes.join(", ")}`;
  return { action: "minted", keyId: minted.id, secret: minted.secret, retire: strays(minted.id), reason };
}

/** Revokes keys; one already gone is done. */
export async function revokeKeys(admin: ProxyClient, ids: string[]): Promise<void> {
  for (const id of ids) {
    try {
      await admin.keys.revoke(id);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
