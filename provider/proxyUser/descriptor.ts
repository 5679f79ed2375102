import type { ProxyUser as WireProxyUser } from "../../sdk";
import type { ProviderContext } from "../context";
import * as d from "../descriptor";
import { createRecorded, keyedFor } from "../exactlyOnce";
import { explained, same, unlessGone } from "../shared";
import { wantsEnabledWrite } from "./enabledHold";
import { proxyUserReview } from "./review";
import { type Inputs, inputs, label, outputs, reads, type Shape, type Stored } from "./schema";

const toWireLimits = (limits: Inputs["limits"]) => ({ daily_gb: limits.dailyGb, monthly_gb: limits.monthlyGb });

function toState(user: WireProxyUser, inputs: Inputs, password: string | null, disabledOutOfBand: boolean): Stored {
  return d.stateOf<Shape>(inputs, {
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

/** Adoption: the object already exists, so create only aligns it with the inputs. */
async function adopt({ client }: ProviderContext, inputs: Inputs, id: string) {
  const existing = await explained(label(inputs), `adopt ${id}`, client.proxyUsers.get(id));
  if (existing.name !== inputs.name) {
    throw new Error(
      `${label(inputs)}: adoptId ${id} is the proxy user "${existing.name}". Set name to "${existing.name}" to adopt it.`,
    );
  }
  const body = alignment(toState(existing, inputs, null, false), inputs, existing.enabled !== inputs.enabled);
  const aligned = Object.keys(body).length > 0 ? await client.proxyUsers.update(id, body) : existing;
  return { id, outs: toState(aligned, inputs, null, false) };
}

export const proxyUser = d.describeKind({
  description: "A gateway login with traffic ceilings. The gateway password is a secret output.",
  ...reads,
  type: "ProxyUser",
  inputs,
  outputs,
  secretOutputs: ["password"],
  statusOutputs: ["updatedAt"],
  label,
  review: proxyUserReview,
  rules: {
    async create(ctx, inputs) {
      if (inputs.adoptId) return adopt(ctx, inputs, inputs.adoptId);
      const { client } = ctx;
      const body = { name: inputs.name, limits: toWireLimits(inputs.limits), enabled: inputs.enabled };
      const existing = { name: inputs.name, list: () => client.proxyUsers.list() };
      // The name is what forces a replacement; limits and enabled are in the body but not the key, so a
      // retry after a crash with other limits is refused by the API and explained, never duplicated.
      return createRecorded(
        keyedFor(inputs, [inputs.name], label(inputs)),
        (request) => explained(label(inputs), "create it", client.proxyUsers.create(body, request), existing),
        (id) => ctx.read(reads, id),
        (user, created) => toState(user, inputs, created.password, false),
      );
    },

    async read(ctx, id, olds) {
      const user = await ctx.read(reads, id);
      if (!user) return undefined;
      const disabledOutOfBand = !user.enabled && (olds.enabled || olds.disabledOutOfBand);
      return toState(user, olds, olds.password, disabledOutOfBand);
    },

    async update({ client }, id, olds, news) {
      const writeEnabled = wantsEnabledWrite(olds, news);
      const body = alignment(olds, news, writeEnabled);
      const write = Object.keys(body).length > 0 ? client.proxyUsers.update(id, body) : client.proxyUsers.get(id);
      const user = await explained(label(olds), "update it", write);
      const heldDisabled = !user.enabled && news.enabled && !writeEnabled;
      return toState(user, news, olds.password, heldDisabled);
    },

    async delete({ client }, id, olds) {
      await explained(
        label(olds),
        "delete it",
        unlessGone(() => client.proxyUsers.delete(id)),
      );
    },
  },
});
