import type { ProxyUser as WireProxyUser } from "../../../sdk";
import type { ProviderContext } from "../../core/context";
import * as d from "../../core/descriptor";
import { explained, isNameConflict, unlessGone } from "../../core/errors";
import { type CreateRequest, createRecorded, keyedFor } from "../../core/exactlyOnce";
import { same } from "../../core/sameValue";
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

type CreateBody = Parameters<ProviderContext["client"]["proxyUsers"]["create"]>[0];

/**
 * A create that meets its own name taken: most often a run of this stack that was killed or failed
 * after the API created the user, its password gone with that run, and this run sent other inputs (or
 * the API would have replayed it). The same inputs again replay it; recover replaces a killed run's.
 * Any other holder is adopted or avoided.
 */
function takenNameAdvice(inputs: Inputs) {
  return (existingId: string | undefined) => {
    const holder = existingId ?? "the existing user";
    const adopt = existingId ? `set adoptId: "${existingId}"` : "set adoptId to its id";
    return (
      `If a run of this stack that was killed or failed created ${holder}: set the inputs back to what that run sent and ` +
      "run `pulumi up` (within 24 hours the API replays its create, password included), or, after a killed run, " +
      `\`pulumi-proxy recover --stack <stack> --up\`, which creates "${inputs.name}" again with a password the stack holds. ` +
      `Otherwise choose another name, or take the user over as it is, without its password: ${adopt} (or \`pulumi import\` it).`
    );
  };
}

/**
 * The create, and in recover's run past the API's 24 hours (adoption.ts) the one way past a user an
 * interrupted run created: its password was returned once, to a process that was killed, so no one
 * holds it and the user cannot be taken over as it is. It is deleted and created again under the same
 * name (the API allows one user per name, so it never exists twice), and the stack gets a password.
 */
async function createOverOrphan(ctx: ProviderContext, inputs: Inputs, body: CreateBody, request: CreateRequest) {
  const { client } = ctx;
  try {
    return await client.proxyUsers.create(body, request);
  } catch (error) {
    if (!ctx.adoption || !isNameConflict(error)) throw error;
    const orphan = await ctx.adoption.claim(
      "ProxyUser",
      () => client.proxyUsers.list(),
      (user) => user.created_at,
      (user) => user.name === inputs.name,
    );
    if (!orphan) throw error;
    ctx.warn(
      `${label(inputs)}: proxy user ${orphan.id} was created by an interrupted run and no state recorded it, nor its password; it is created again under its name so that the stack holds a password that works.`,
    );
    await unlessGone(() => client.proxyUsers.delete(orphan.id));
    return client.proxyUsers.create(body, request);
  }
}

export const proxyUser = d.describeKind({
  description: "A gateway login with traffic ceilings. The gateway password is a secret output.",
  ...reads,
  type: "ProxyUser",
  example: { name: "scraper", limits: { dailyGb: 5, monthlyGb: 100 } },
  inputs,
  outputs,
  secretOutputs: ["password"],
  statusOutputs: ["updatedAt"],
  label,
  review: proxyUserReview,
  rules: {
    async create(ctx, inputs) {
      if (inputs.adoptId) return adopt(ctx, inputs, inputs.adoptId);
      const body = { name: inputs.name, limits: toWireLimits(inputs.limits), enabled: inputs.enabled };
      const existing = {
        name: inputs.name,
        list: () => ctx.client.proxyUsers.list(),
        // recover's run has already replaced a killed run's user (createOverOrphan): the holder is another's.
        ...(ctx.adoption ? {} : { advice: takenNameAdvice(inputs) }),
      };
      // The whole request is the key's generation, so a user declared again with other limits never
      // meets the first create's key. The API holds one user per name: a retry after a crash with other
      // inputs (a new key) is refused as a name taken and explained, never duplicated.
      return createRecorded(
        keyedFor(inputs, [body], label(inputs), ctx.adoption, true),
        (request) => explained(label(inputs), "create it", createOverOrphan(ctx, inputs, body, request), existing),
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
