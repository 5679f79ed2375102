import type { ConfigMap, Stack } from "@pulumi/pulumi/automation";
import { type ConfigKey, CREDENTIAL_ENV } from "../../provider/core/settings";
import { type ApiKey, ProxyClient } from "../../sdk";
import { describeFailure, maskedConfig, UsageError } from "../stack";
import { type KeyAction, revokeKeys, shardKey } from "./keys";
import { inPool } from "./pool";
import { type FleetSpec, keyNameFor, type Shard } from "./spec";
import type { FleetWorkspace } from "./workspace";

/**
 * The summary after an up, refresh or destroy without the stack's secret config in plaintext: only
 * its counts are read, and each plaintext read costs the passphrase's key derivation (0.2 s of CPU).
 */
const MASKED_SUMMARY = { showSecrets: false } as const;

/** One stack's line in the fleet's summary. */
export interface ShardResult {
  stack: string;
  users: number;
  /** What happened to its key: a new one, a new secret, the same, or revoked with the stack. */
  key: KeyAction | "revoked" | "none";
  outcome: "ok" | "failed" | "removed";
  /** The engine's counts (`create`, `update`, `delete`, `same`…). */
  changes: Record<string, number>;
  seconds: number;
  error?: string;
}

/** `keys` is `up` without the engine: each stack's key minted, rotated or retired and stored, nothing deployed. */
export type FleetOp = "up" | "keys" | "refresh" | "destroy";

/** The admin client: the key that mints the shards' keys (keys:write and every scope it hands out). */
export function adminClient(): ProxyClient {
  // The environment alone: the admin key is the operator's, never a stack's config.
  const baseUrl = process.env[CREDENTIAL_ENV["proxy:apiUrl"]];
  const apiKey = process.env[CREDENTIAL_ENV["proxy:apiKey"]];
  if (!baseUrl || !apiKey) {
    throw new UsageError(
      "PROXY_API_URL and PROXY_API_KEY must name the API and an admin key holding keys:write and " +
        "proxy-users:read, proxy-users:write, limits:write (the scopes each stack's key gets)",
    );
  }
  return new ProxyClient({ baseUrl, apiKey });
}

/** Only what differs is written, so a converged stack's settings file is left as it is. */
async function storeConfig(stack: Stack, current: ConfigMap, wanted: ConfigMap): Promise<void> {
  const changed = Object.fromEntries(
    Object.entries(wanted).filter(([key, entry]) => current[key]?.value !== entry.value),
  );
  if (Object.keys(changed).length > 0) await stack.setAllConfig(changed);
}

/**
 * The stack, for an up that reads back only its summary: the fleet reports the engine's counts, and
 * the outputs the Automation API reads after each up take two CLI starts, one decrypting (about
 * 0.5 s of CPU a stack). The up's result then carries no outputs.
 */
function withoutOutputs(stack: Stack): Stack {
  return Object.create(stack, { outputs: { value: async () => ({}) } });
}

function changesOf(summary: { resourceChanges?: Record<string, number> } | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(summary?.resourceChanges ?? {}).filter(([, count]) => count > 0));
}

/** A shard's key first (stored before anything else: a secret is shown once), then its `up`. */
async function converge(
  fleet: FleetWorkspace,
  spec: FleetSpec,
  admin: ProxyClient,
  accountKeys: ApiKey[],
  shard: Shard,
  deploy: boolean,
  progress: Progress,
): Promise<Omit<ShardResult, "seconds" | "outcome">> {
  const stack = await fleet.open(shard);
  // Masked: the key's secret is only ever written here (when minted or rotated), never compared.
  const current = await maskedConfig(stack);
  const key = await shardKey(admin, spec, shard, current["fleet:keyId"]?.value, accountKeys);
  progress.key = key.action;
  await storeConfig(stack, current, {
    "fleet:customer": { value: shard.stack },
    "fleet:usersFile": { value: spec.usersFile },
    "fleet:keyId": { value: key.keyId },
    ["proxy:apiUrl" satisfies ConfigKey]: { value: admin.baseUrl },
    ...(key.secret ? { ["proxy:apiKey" satisfies ConfigKey]: { value: key.secret, secret: true } } : {}),
  });
  await revokeKeys(admin, key.retire);
  // Refreshed first, as a deployment should be: a change made outside Pulumi is undone, not kept.
  const changes = deploy
    ? changesOf((await withoutOutputs(stack).up({ refresh: true, ...MASKED_SUMMARY })).summary)
    : {};
  return { stack: shard.stack, users: shard.users.length, key: key.action, changes };
}

/** A stack whose customer left the users file: destroyed, its key revoked, the stack removed. */
async function remove(
  fleet: FleetWorkspace,
  admin: ProxyClient,
  accountKeys: ApiKey[],
  name: string,
  prefix: string,
): Promise<Omit<ShardResult, "seconds" | "outcome">> {
  const stack = await fleet.select(name);
  const keyId = (await maskedConfig(stack))["fleet:keyId"]?.value;
  const destroyed = await stack.destroy(MASKED_SUMMARY);
  const named = accountKeys.filter((key) => key.name === keyNameFor(prefix, name)).map((key) => key.id);
  await revokeKeys(admin, [...new Set([...(keyId ? [keyId] : []), ...named])]);
  await fleet.workspace.removeStack(name);
  return { stack: name, users: 0, key: "revoked", changes: changesOf(destroyed.summary) };
}

/** What a stack's task did before it failed, for its line in the summary. */
type Progress = { key?: KeyAction };

/** The engine repeats its error in the diagnostics and the summary: each line once. */
const eachLineOnce = (message: string) =>
  [...new Set(message.split("\n").map((line) => line.trim()))].filter(Boolean).join("\n");

async function timed(
  work: () => Promise<Omit<ShardResult, "seconds" | "outcome">>,
  outcome: "ok" | "removed",
  fallback: { stack: string; users: number },
  progress: Progress = {},
): Promise<ShardResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  try {
    return { ...(await work()), outcome, seconds: seconds() };
  } catch (error) {
    const message = eachLineOnce(describeFailure(error, { stack: fallback.stack, cwd: "" }));
    const key = progress.key ?? "none";
    return { ...fallback, key, outcome: "failed", changes: {}, seconds: seconds(), error: message };
  }
}

export interface FleetRunOptions {
  op: FleetOp;
  /** Only these shards; without, every shard, and (for `up`) the stacks of customers no longer listed are removed. */
  only?: string[];
  prune: boolean;
}

/**
 * Runs the operation on the fleet's stacks side by side, `concurrency` at a time. A stack that fails
 * is reported and the others go on; the summary has one line per stack.
 */
export async function runFleet(
  fleet: FleetWorkspace,
  spec: FleetSpec,
  shards: Shard[],
  options: FleetRunOptions,
): Promise<ShardResult[]> {
  const chosen = options.only ? shards.filter((shard) => options.only?.includes(shard.stack)) : shards;
  const members = await fleet.members();
  const listed = new Set(shards.map((shard) => shard.stack));
  const tasks: (() => Promise<ShardResult>)[] = [];
  const needsAdmin = options.op !== "refresh";
  const admin = needsAdmin ? adminClient() : undefined;
  const accountKeys = admin ? await admin.keys.list({ limit: 200 }).all() : [];
  const fallback = (shard: Shard) => ({ stack: shard.stack, users: shard.users.length });
  for (const shard of chosen) {
    if ((options.op === "up" || options.op === "keys") && admin) {
      const deploy = options.op === "up";
      const progress: Progress = {};
      const work = () => converge(fleet, spec, admin, accountKeys, shard, deploy, progress);
      tasks.push(() => timed(work, "ok", fallback(shard), progress));
    } else if (members.includes(shard.stack)) {
      tasks.push(() =>
        options.op === "destroy" && admin
          ? timed(() => remove(fleet, admin, accountKeys, shard.stack, spec.keys.prefix), "removed", fallback(shard))
          : timed(() => refresh(fleet, shard), "ok", fallback(shard)),
      );
    }
  }
  if (options.prune && admin) {
    for (const name of members.filter((member) => !listed.has(member))) {
      const gone = { stack: name, users: 0 };
      tasks.push(() => timed(() => remove(fleet, admin, accountKeys, name, spec.keys.prefix), "removed", gone));
    }
  }
  const settled = await inPool(tasks, spec.concurrency, (task) => task());
  return settled
    .map((result) => (result.status === "fulfilled" ? withRecoverFix(result.value, spec.file) : undefined))
    .filter((result): result is ShardResult => result !== undefined)
    .sort((a, b) => a.stack.localeCompare(b.stack));
}

/**
 * What the engine says of a stack a killed run left locked (a cancelled CI job): the lock, or, when
 * the kill came as the lock file was written, that file's empty JSON, which it cannot read.
 */
const KILLED_RUN_LOCK = /currently locked|unexpected end of JSON input/;

/**
 * A stack a killed run left locked: the engine's message offers `pulumi cancel` (or, for a lock file
 * left empty, nothing at all); recover releases the lock and finishes the killed run's writes.
 */
function withRecoverFix(result: ShardResult, fleetFile: string): ShardResult {
  if (!result.error || !KILLED_RUN_LOCK.test(result.error)) return result;
  const fix =
    "Fix: if no run of this stack is still going, a killed one left the lock (an empty lock file reads as unexpected end of JSON input): " +
    `\`pulumi-proxy recover --fleet ${fleetFile} --up\` (--destroy after a killed \`fleet destroy\`) releases it and finishes that run.`;
  return { ...result, error: `${result.error}\n${fix}` };
}

async function refresh(fleet: FleetWorkspace, shard: Shard): Promise<Omit<ShardResult, "seconds" | "outcome">> {
  const refreshed = await (await fleet.select(shard.stack)).refresh(MASKED_SUMMARY);
  return { stack: shard.stack, users: shard.users.length, key: "none", changes: changesOf(refreshed.summary) };
}
