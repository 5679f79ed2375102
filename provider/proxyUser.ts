import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { dailyWithinMonthly, Gigabytes, ProxyUserId, ProxyUserName, Timestamp } from "../contract";
import type { ProxyUser as WireProxyUser } from "../sdk";
import { providerContext } from "./context";
import * as d from "./declaration";
import { wantsEnabledWrite } from "./enabledHold";
import { createRecorded, keyedFor } from "./exactlyOnce";
import { changed, explained, same, unlessGone } from "./shared";
import stubs from "./stubs/proxyUser";

const Limits = z
  .strictObject(
    {
      /** Daily ceiling in GB (0–100000, at most 3 decimals); null or absent means no ceiling. */
      dailyGb: Gigabytes.default(null),
      /** Monthly ceiling in GB (0–100000, at most 3 decimals); null or absent means no ceiling. */
      monthlyGb: Gigabytes.default(null),
    },
    {
      error: (issue) => (issue.code === "unrecognized_keys" ? "is not a limit; use dailyGb and monthlyGb" : undefined),
    },
  )
  .refine((limits) => dailyWithinMonthly({ daily_gb: limits.dailyGb, monthly_gb: limits.monthlyGb }), {
    path: ["dailyGb"],
    error: (issue) => {
      const limits = issue.input as { dailyGb: number; monthlyGb: number };
      return `(${limits.dailyGb}) must not exceed limits.monthlyGb (${limits.monthlyGb})`;
    },
  });
export type TrafficLimits = z.input<typeof Limits>;

export const proxyUser = d.declareResource({
  inputs: {
    /** Gateway login: 1–63 of a-z, 0-9 and '-', starting with a letter. Changing it replaces the user. */
    name: ProxyUserName,
    /** Traffic ceilings, updated in place. Omitted ceilings mean "no ceiling". */
    limits: Limits.default({ dailyGb: null, monthlyGb: null }),
    /** Whether the user may use the gateways (default true), updated in place. */
    enabled: z.boolean().default(true),
    /**
     * A user disabled out of band (an emergency disable) stays disabled even though `enabled` is true,
     * so `pulumi up` never silently undoes it. Change this value to acknowledge and re-enable.
     */
    reenableTrigger: d.Trigger.optional(),
    /** Take over the existing proxy user with this id (pu_…) instead of creating one. */
    adoptId: ProxyUserId.optional(),
  },
  outputs: {
    proxyUserId: z.string(),
    name: z.string(),
    username: z.string(),
    /** Returned once by the API at creation; null for adopted users. */
    password: z.string().nullable(),
    limits: z.object({ dailyGb: z.number().nullable(), monthlyGb: z.number().nullable() }),
    enabled: z.boolean(),
    /** True while the user is disabled by someone other than this stack. */
    disabledOutOfBand: z.boolean().default(false),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  secretOutputs: ["password"],
  statusOutputs: ["updatedAt"],
});
type Inputs = d.InputsOf<typeof proxyUser>;
type Stored = d.StoredOf<typeof proxyUser>;

const label = (name: unknown) => `ProxyUser "${typeof name === "string" ? name : "?"}"`;
const toWireLimits = (limits: Inputs["limits"]) => ({ daily_gb: limits.dailyGb, monthly_gb: limits.monthlyGb });

function toState(user: WireProxyUser, inputs: Inputs, password: string | null, disabledOutOfBand: boolean): Stored {
  return d.stateOf(proxyUser, inputs, {
    proxyUserId: user.id,
    name: user.name,
    username: user.username,
    password,
    limits: { dailyGb: user.limits.daily_gb, monthlyGb: user.limits.monthly_gb },
    enabled: user.enabled,
    disabledOutOfBand,
    createdAt: user.created_at,
    updatedAt: user.updated_at,
  });
}

/** The PATCH that makes the user match the inputs: only what differs, `enabled` only where allowed. */
function alignment(current: { limits: Inputs["limits"] }, news: Inputs, writeEnabled: boolean) {
  return {
    ...(same(current.limits, news.limits) ? {} : { limits: toWireLimits(news.limits) }),
    ...(writeEnabled ? { enabled: news.enabled } : {}),
  };
}

export const proxyUserHandler = d.handlerFor(proxyUser, {
  diff: (olds, news) => ({
    updates: [
      ...changed(olds, news, ["limits", "reenableTrigger"]),
      ...(wantsEnabledWrite(olds, news) ? ["enabled"] : []),
    ],
    replaces: changed(olds, news, ["name"]),
  }),

  async create(inputs) {
    const { client, reads } = providerContext();
    if (inputs.adoptId) return adopt(inputs, inputs.adoptId);
    const body = { name: inputs.name, limits: toWireLimits(inputs.limits), enabled: inputs.enabled };
    const existing = { name: inputs.name, list: () => client.proxyUsers.list() };
    // The name is what forces a replacement; limits and enabled are in the body but not the key, so a
    // retry after a crash with other limits is refused by the API and explained, never duplicated.
    return createRecorded(
      keyedFor(inputs, [inputs.name], label(inputs.name)),
      (request) => explained(label(inputs.name), "create it", client.proxyUsers.create(body, request), existing),
      (id) => reads.proxyUser.read(id),
      (user, created) => toState(user, inputs, created.password, false),
    );
  },

  async read(id, olds) {
    const user = await providerContext().reads.proxyUser.read(id);
    if (!user) return {};
    const disabledOutOfBand = !user.enabled && (olds.enabled || olds.disabledOutOfBand);
    return { id, props: toState(user, olds, olds.password, disabledOutOfBand) };
  },

  async update(id, olds, news) {
    const { client } = providerContext();
    const writeEnabled = wantsEnabledWrite(olds, news);
    const body = alignment(olds, news, writeEnabled);
    const write = Object.keys(body).length > 0 ? client.proxyUsers.update(id, body) : client.proxyUsers.get(id);
    const user = await explained(label(olds.name), "update it", write);
    const heldDisabled = !user.enabled && news.enabled && !writeEnabled;
    return { outs: toState(user, news, olds.password, heldDisabled) };
  },

  async delete(id, olds) {
    const { client } = providerContext();
    await explained(
      label(olds.name),
      "delete it",
      unlessGone(() => client.proxyUsers.delete(id)),
    );
  },
});

/** Adoption: the object already exists, so create only aligns it with the inputs. */
async function adopt(inputs: Inputs, id: string): Promise<pulumi.dynamic.CreateResult<Stored>> {
  const { client } = providerContext();
  const existing = await explained(label(inputs.name), `adopt ${id}`, client.proxyUsers.get(id));
  if (existing.name !== inputs.name) {
    throw new Error(
      `${label(inputs.name)}: adoptId ${id} is the proxy user "${existing.name}". Set name to "${existing.name}" to adopt it.`,
    );
  }
  const body = alignment(toState(existing, inputs, null, false), inputs, existing.enabled !== inputs.enabled);
  const aligned = Object.keys(body).length > 0 ? await client.proxyUsers.update(id, body) : existing;
  return { id, outs: toState(aligned, inputs, null, false) };
}

export type ProxyUserArgs = d.ArgsOf<typeof proxyUser>;
/** A gateway login with traffic ceilings. The gateway password is a secret output. */
export const ProxyUser = d.resourceClass(proxyUser, stubs, "ProxyUser");
export type ProxyUser = InstanceType<typeof ProxyUser>;
