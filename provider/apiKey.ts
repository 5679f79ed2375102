import * as pulumi from "@pulumi/pulumi";
import type { ApiKey as WireApiKey } from "../sdk";
import type { Scope } from "../sdk/schemas";
import { ApiKeyId, CreateApiKeyBody, GRACE_HOURS_DEFAULT, GraceHours, SCOPES, Scopes, Timestamp } from "../sdk/schemas";
import { apiClient } from "./config";
import { readBack, readsFor } from "./reads";
import { CheckFailures, diffResult, explain, explained, isUnknown, PartialFailure, same, unlessGone } from "./shared";
import stubs from "./stubs/apiKey";

export interface ApiKeyArgs {
  /** 1–63 characters. Changing it replaces the key (the new key is created before the old is revoked). */
  name: pulumi.Input<string>;
  /** A non-empty set of the seven scopes. Changing it replaces the key. */
  scopes: pulumi.Input<pulumi.Input<Scope>[]>;
  /** ISO 8601 UTC expiry; changing it replaces the key. */
  expiresAt?: pulumi.Input<string>;
  /** Any change of this value rotates the secret in place, like a keeper. */
  rotationTrigger?: pulumi.Input<string>;
  /** How long the previous secret keeps working after a rotation: 0–168 hours, default 24. */
  graceHours?: pulumi.Input<number>;
  /** Take over the existing key with this id (key_…) instead of creating one; rotate it to learn a secret. */
  adoptId?: pulumi.Input<string>;
}

interface Inputs {
  name: string;
  scopes: Scope[];
  expiresAt?: string;
  rotationTrigger?: string;
  graceHours: number;
  adoptId?: string;
}

interface State extends Inputs {
  keyId: string;
  /** The full secret: present after create or a rotation, never readable again from the API. */
  secret?: string;
  secretHint: string;
  createdAt: string;
  lastRotatedAt: string | null;
  previousSecretExpiresAt: string | null;
}

const label = (name: unknown) => `ApiKey "${typeof name === "string" ? name : "?"}"`;

/** Scopes are a set: one canonical order means no false diffs when the user reorders them. */
function canonicalScopes(scopes: readonly string[]): Scope[] {
  return SCOPES.filter((scope) => scopes.includes(scope));
}

function toState(key: WireApiKey, inputs: Inputs, secret: string | undefined): State {
  return {
    ...inputs,
    name: key.name,
    scopes: canonicalScopes(key.scopes),
    ...(key.expires_at ? { expiresAt: key.expires_at } : {}),
    keyId: key.id,
    ...(secret !== undefined ? { secret } : {}),
    secretHint: key.secret_hint,
    createdAt: key.created_at,
    lastRotatedAt: key.last_rotated_at,
    previousSecretExpiresAt: key.previous_secret_expires_at,
  };
}

function sameInstant(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined ? a === b : Date.parse(a) === Date.parse(b);
}

export const apiKeyHandler = {
  async check(_olds: unknown, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult<Inputs>> {
    const failures = new CheckFailures();
    failures.validate("name", CreateApiKeyBody.shape.name, news.name);
    if (Array.isArray(news.scopes)) {
      news.scopes.forEach((scope, index) => {
        if (!isUnknown(scope) && !(SCOPES as readonly unknown[]).includes(scope)) {
          failures.add(
            `scopes[${index}]`,
            `scopes[${index}] "${String(scope)}" is not a scope; use one of ${SCOPES.join(", ")}`,
          );
        }
      });
      if (failures.failures.length === 0) failures.validate("scopes", Scopes, news.scopes);
    } else if (!isUnknown(news.scopes)) {
      failures.add("scopes", `scopes must be a non-empty list of ${SCOPES.join(", ")}`);
    }
    const graceHours = news.graceHours ?? GRACE_HOURS_DEFAULT;
    failures.validate("graceHours", GraceHours, graceHours);
    let expiresAt = news.expiresAt as string | undefined;
    if (expiresAt !== undefined && !isUnknown(expiresAt)) {
      const parsed = typeof expiresAt === "string" ? new Date(expiresAt) : undefined;
      if (!parsed || Number.isNaN(parsed.getTime()))
        failures.add("expiresAt", `expiresAt must be an ISO 8601 timestamp (got ${JSON.stringify(expiresAt)})`);
      else expiresAt = failures.validate("expiresAt", Timestamp, parsed.toISOString());
    }
    if (news.adoptId !== undefined) failures.validate("adoptId", ApiKeyId, news.adoptId);
    return failures.result({
      name: news.name as string,
      scopes:
        Array.isArray(news.scopes) && !news.scopes.some(isUnknown)
          ? canonicalScopes(news.scopes as string[])
          : (news.scopes as Scope[]),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(news.rotationTrigger !== undefined ? { rotationTrigger: news.rotationTrigger as string } : {}),
      graceHours: graceHours as number,
      ...(news.adoptId !== undefined ? { adoptId: news.adoptId as string } : {}),
    });
  },

  async diff(_id: string, olds: Partial<State>, news: Inputs): Promise<pulumi.dynamic.DiffResult> {
    const replaces: string[] = [];
    if (olds.name !== news.name) replaces.push("name");
    if (!same(canonicalScopes(olds.scopes ?? []), news.scopes)) replaces.push("scopes");
    if (!sameInstant(olds.expiresAt, news.expiresAt)) replaces.push("expiresAt");
    const updates: string[] = [];
    if (olds.rotationTrigger !== news.rotationTrigger) updates.push("rotationTrigger");
    if ((olds.graceHours ?? GRACE_HOURS_DEFAULT) !== news.graceHours) updates.push("graceHours");
    return diffResult(updates, replaces);
  },

  async create(inputs: Inputs): Promise<pulumi.dynamic.CreateResult<State>> {
    const client = apiClient();
    if (inputs.adoptId) {
      const existing = await explained(label(inputs.name), `adopt ${inputs.adoptId}`, client.keys.get(inputs.adoptId));
      if (existing.name !== inputs.name || !same(canonicalScopes(existing.scopes), inputs.scopes)) {
        throw new Error(
          `${label(inputs.name)}: adoptId ${inputs.adoptId} is the key "${existing.name}" with scopes ${existing.scopes.join(", ")}. Set name and scopes to match it to adopt it.`,
        );
      }
      return { id: existing.id, outs: toState(existing, inputs, undefined) };
    }
    const created = await explained(
      label(inputs.name),
      "create it",
      client.keys.create({
        name: inputs.name,
        scopes: inputs.scopes,
        ...(inputs.expiresAt ? { expires_at: inputs.expiresAt } : {}),
      }),
    );
    const fromCreate = toState(created, inputs, created.secret);
    try {
      return {
        id: created.id,
        outs: toState(await readBack(readsFor(client).apiKey, created.id), inputs, created.secret),
      };
    } catch (error) {
      throw new PartialFailure(
        explain(label(inputs.name), "read it back after creating it", error).message,
        created.id,
        { ...fromCreate },
      );
    }
  },

  async read(id: string, olds: Partial<State>): Promise<pulumi.dynamic.ReadResult<State>> {
    const key = await readsFor(apiClient()).apiKey.read(id);
    if (!key) return {};
    const inputs = { ...(olds as State), graceHours: olds.graceHours ?? GRACE_HOURS_DEFAULT };
    return { id, props: toState(key, inputs, olds.secret) };
  },

  async update(id: string, olds: Partial<State>, news: Inputs): Promise<pulumi.dynamic.UpdateResult<State>> {
    const client = apiClient();
    if (olds.rotationTrigger === news.rotationTrigger) {
      const key = await explained(label(news.name), "read it", client.keys.get(id));
      return { outs: toState(key, news, olds.secret) };
    }
    const rotated = await explained(
      label(news.name),
      "rotate it",
      client.keys.rotate(id, { grace_hours: news.graceHours }),
    );
    return { outs: toState(rotated, news, rotated.secret) };
  },

  async delete(id: string, props: Partial<State>): Promise<void> {
    await explained(
      label(props.name),
      "revoke it",
      unlessGone(() => apiClient().keys.revoke(id)),
    );
  },
};

/** A scoped API key. `secret` is a secret output, shown once by the API and kept only in (encrypted) state. */
export class ApiKey extends pulumi.dynamic.Resource {
  declare readonly keyId: pulumi.Output<string>;
  declare readonly name: pulumi.Output<string>;
  declare readonly scopes: pulumi.Output<Scope[]>;
  declare readonly secret: pulumi.Output<string | undefined>;
  declare readonly secretHint: pulumi.Output<string>;
  declare readonly createdAt: pulumi.Output<string>;
  declare readonly expiresAt: pulumi.Output<string | undefined>;
  declare readonly lastRotatedAt: pulumi.Output<string | null>;
  /** When the secret replaced by the last rotation stops working. */
  declare readonly previousSecretExpiresAt: pulumi.Output<string | null>;

  constructor(name: string, args: ApiKeyArgs, opts?: pulumi.CustomResourceOptions) {
    const outputs = {
      keyId: undefined,
      secret: undefined,
      secretHint: undefined,
      createdAt: undefined,
      lastRotatedAt: undefined,
      previousSecretExpiresAt: undefined,
    };
    // An optional input is an output too: without a key here, `key.expiresAt` would be undefined when omitted.
    super(
      stubs,
      name,
      { ...outputs, expiresAt: undefined, ...args },
      { ...opts, additionalSecretOutputs: ["secret", ...(opts?.additionalSecretOutputs ?? [])] },
      "proxy",
      "ApiKey",
    );
  }
}
