import * as pulumi from "@pulumi/pulumi";
import type { ProxyUser as WireProxyUser } from "../sdk";
import { Gigabytes, LimitsInput, ProxyUserId, ProxyUserName } from "../sdk/schemas";
import { apiClient } from "./config";
import { readBack, readsFor } from "./reads";
import { CheckFailures, diffResult, explain, explained, isUnknown, PartialFailure, same, unlessGone } from "./shared";
import stubs from "./stubs/proxyUser";

export interface TrafficLimits {
  /** Daily ceiling in GB (0–100000, at most 3 decimals); null or absent means no ceiling. */
  dailyGb?: number | null;
  /** Monthly ceiling in GB (0–100000, at most 3 decimals); null or absent means no ceiling. */
  monthlyGb?: number | null;
}

export interface ProxyUserArgs {
  /** Gateway login: 1–63 of a-z, 0-9 and '-', starting with a letter. Changing it replaces the user. */
  name: pulumi.Input<string>;
  /** Traffic ceilings, updated in place. Omitted ceilings mean "no ceiling". */
  limits?: pulumi.Input<TrafficLimits>;
  /** Whether the user may use the gateways (default true), updated in place. */
  enabled?: pulumi.Input<boolean>;
  /**
   * A user disabled out of band (an emergency disable) stays disabled even though `enabled` is true,
   * so `pulumi up` never silently undoes it. Change this value to acknowledge and re-enable.
   */
  reenableTrigger?: pulumi.Input<string>;
  /** Take over the existing proxy user with this id (pu_…) instead of creating one. */
  adoptId?: pulumi.Input<string>;
}

/** The normalized inputs `check` returns and the outputs stored in state. */
interface Inputs {
  name: string;
  limits: { dailyGb: number | null; monthlyGb: number | null };
  enabled: boolean;
  reenableTrigger?: string;
  adoptId?: string;
}

interface State extends Inputs {
  proxyUserId: string;
  username: string;
  password?: string;
  createdAt: string;
  updatedAt: string;
  /** True while the user is disabled by someone other than this stack. */
  disabledOutOfBand: boolean;
}

function label(name: unknown): string {
  return `ProxyUser "${typeof name === "string" ? name : "?"}"`;
}

function toWireLimits(limits: Inputs["limits"]) {
  return { daily_gb: limits.dailyGb, monthly_gb: limits.monthlyGb };
}

/** Builds state from the API object; what the API never returns again is carried from `previous`. */
function toState(user: WireProxyUser, inputs: Inputs, previous: Partial<State>, disabledOutOfBand: boolean): State {
  return {
    name: user.name,
    limits: { dailyGb: user.limits.daily_gb, monthlyGb: user.limits.monthly_gb },
    enabled: user.enabled,
    ...(inputs.reenableTrigger !== undefined ? { reenableTrigger: inputs.reenableTrigger } : {}),
    ...(inputs.adoptId !== undefined ? { adoptId: inputs.adoptId } : {}),
    proxyUserId: user.id,
    username: user.username,
    ...(previous.password !== undefined ? { password: previous.password } : {}),
    createdAt: user.created_at,
    updatedAt: user.updated_at,
    disabledOutOfBand,
  };
}

/** State written by any earlier version may lack newer fields; read it through this. */
function normalizeState(props: Partial<State>): State {
  return {
    ...(props as State),
    limits: { dailyGb: props.limits?.dailyGb ?? null, monthlyGb: props.limits?.monthlyGb ?? null },
    enabled: props.enabled !== false,
    disabledOutOfBand: props.disabledOutOfBand === true,
  };
}

/**
 * Whether `up` should write `enabled`. An out-of-band disable is held until the user changes
 * `reenableTrigger`, so a pipeline never re-enables a user someone switched off in an emergency.
 */
function wantsEnabledWrite(olds: State, news: Inputs): boolean {
  if (news.enabled === olds.enabled) return !news.enabled && olds.disabledOutOfBand;
  if (!news.enabled) return true;
  return !olds.disabledOutOfBand || news.reenableTrigger !== olds.reenableTrigger;
}

export const proxyUserHandler = {
  async check(_olds: unknown, news: Record<string, unknown>): Promise<pulumi.dynamic.CheckResult<Inputs>> {
    const failures = new CheckFailures();
    failures.validate("name", ProxyUserName, news.name);
    const limitsKnown = !isUnknown(news.limits);
    const rawLimits = (limitsKnown ? (news.limits ?? {}) : {}) as Record<string, unknown>;
    const limits = (
      limitsKnown ? { dailyGb: rawLimits.dailyGb ?? null, monthlyGb: rawLimits.monthlyGb ?? null } : news.limits
    ) as Inputs["limits"];
    if (limitsKnown) {
      for (const key of Object.keys(rawLimits)) {
        if (key !== "dailyGb" && key !== "monthlyGb")
          failures.add(`limits.${key}`, `limits.${key} is not a limit; use dailyGb and monthlyGb`);
      }
      const daily = failures.validate("limits.dailyGb", Gigabytes, limits.dailyGb);
      const monthly = failures.validate("limits.monthlyGb", Gigabytes, limits.monthlyGb);
      if (daily != null && monthly != null && !LimitsInput.safeParse(toWireLimits(limits)).success) {
        failures.add("limits.dailyGb", `limits.dailyGb (${daily}) must not exceed limits.monthlyGb (${monthly})`);
      }
    }
    if (news.enabled !== undefined && !isUnknown(news.enabled) && typeof news.enabled !== "boolean") {
      failures.add("enabled", "enabled must be true or false");
    }
    if (news.adoptId !== undefined) failures.validate("adoptId", ProxyUserId, news.adoptId);
    return failures.result({
      name: news.name as string,
      limits,
      enabled: news.enabled !== false,
      ...(news.reenableTrigger !== undefined ? { reenableTrigger: news.reenableTrigger as string } : {}),
      ...(news.adoptId !== undefined ? { adoptId: news.adoptId as string } : {}),
    });
  },

  async diff(_id: string, oldProps: Partial<State>, news: Inputs): Promise<pulumi.dynamic.DiffResult> {
    const olds = normalizeState(oldProps);
    const updates: string[] = [];
    if (!same(olds.limits, news.limits)) updates.push("limits");
    if (wantsEnabledWrite(olds, news)) updates.push("enabled");
    if (news.reenableTrigger !== olds.reenableTrigger) updates.push("reenableTrigger");
    return diffResult(updates, olds.name === news.name ? [] : ["name"]);
  },

  async create(inputs: Inputs): Promise<pulumi.dynamic.CreateResult<State>> {
    const client = apiClient();
    if (inputs.adoptId) return adopt(inputs);
    const created = await explained(
      label(inputs.name),
      "create it",
      client.proxyUsers.create({ name: inputs.name, limits: toWireLimits(inputs.limits), enabled: inputs.enabled }),
    );
    const fromCreate = toState(created, inputs, { password: created.password }, false);
    try {
      const reread = await readBack(readsFor(client).proxyUser, created.id);
      return { id: created.id, outs: toState(reread, inputs, fromCreate, false) };
    } catch (error) {
      throw new PartialFailure(
        explain(label(inputs.name), "read it back after creating it", error).message,
        created.id,
        { ...fromCreate },
      );
    }
  },

  async read(id: string, oldProps: Partial<State>): Promise<pulumi.dynamic.ReadResult<State>> {
    const olds = normalizeState(oldProps);
    const user = await readsFor(apiClient()).proxyUser.read(id);
    if (!user) return {};
    const disabledOutOfBand = !user.enabled && (olds.enabled || olds.disabledOutOfBand);
    return { id, props: toState(user, olds, olds, disabledOutOfBand) };
  },

  async update(id: string, oldProps: Partial<State>, news: Inputs): Promise<pulumi.dynamic.UpdateResult<State>> {
    const olds = normalizeState(oldProps);
    const writeEnabled = wantsEnabledWrite(olds, news);
    const body = {
      ...(same(olds.limits, news.limits) ? {} : { limits: toWireLimits(news.limits) }),
      ...(writeEnabled ? { enabled: news.enabled } : {}),
    };
    const client = apiClient();
    const user = await explained(
      label(olds.name),
      "update it",
      Object.keys(body).length > 0 ? client.proxyUsers.update(id, body) : client.proxyUsers.get(id),
    );
    const heldDisabled = !user.enabled && news.enabled && !writeEnabled;
    return { outs: toState(user, news, olds, heldDisabled) };
  },

  async delete(id: string, props: Partial<State>): Promise<void> {
    await explained(
      label(props.name),
      "delete it",
      unlessGone(() => apiClient().proxyUsers.delete(id)),
    );
  },
};

/** Adoption: the object already exists, so create only aligns it with the inputs. */
async function adopt(inputs: Inputs): Promise<pulumi.dynamic.CreateResult<State>> {
  const client = apiClient();
  const id = inputs.adoptId as string;
  const existing = await explained(label(inputs.name), `adopt ${id}`, client.proxyUsers.get(id));
  if (existing.name !== inputs.name) {
    throw new Error(
      `${label(inputs.name)}: adoptId ${id} is the proxy user "${existing.name}". Set name to "${existing.name}" to adopt it.`,
    );
  }
  const current = toState(existing, inputs, {}, false);
  const body = {
    ...(same(current.limits, inputs.limits) ? {} : { limits: toWireLimits(inputs.limits) }),
    ...(current.enabled === inputs.enabled ? {} : { enabled: inputs.enabled }),
  };
  const aligned = Object.keys(body).length > 0 ? await client.proxyUsers.update(id, body) : existing;
  return { id, outs: toState(aligned, inputs, {}, false) };
}

/** A gateway login with traffic ceilings. The gateway password is a secret output. */
export class ProxyUser extends pulumi.dynamic.Resource {
  declare readonly proxyUserId: pulumi.Output<string>;
  declare readonly name: pulumi.Output<string>;
  declare readonly username: pulumi.Output<string>;
  /** Returned once by the API at creation; absent for adopted users. */
  declare readonly password: pulumi.Output<string | undefined>;
  declare readonly limits: pulumi.Output<{ dailyGb: number | null; monthlyGb: number | null }>;
  declare readonly enabled: pulumi.Output<boolean>;
  declare readonly disabledOutOfBand: pulumi.Output<boolean>;
  declare readonly createdAt: pulumi.Output<string>;
  declare readonly updatedAt: pulumi.Output<string>;

  constructor(name: string, args: ProxyUserArgs, opts?: pulumi.CustomResourceOptions) {
    const outputs = {
      proxyUserId: undefined,
      username: undefined,
      password: undefined,
      disabledOutOfBand: undefined,
      createdAt: undefined,
      updatedAt: undefined,
    };
    // Optional inputs are outputs too: without a key here, `user.enabled` would be undefined when omitted.
    super(
      stubs,
      name,
      { ...outputs, limits: undefined, enabled: undefined, ...args },
      { ...opts, additionalSecretOutputs: ["password", ...(opts?.additionalSecretOutputs ?? [])] },
      "proxy",
      "ProxyUser",
    );
  }
}
