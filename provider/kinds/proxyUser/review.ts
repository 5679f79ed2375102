import { BYTES_PER_GB } from "../../../contract/proxyUsers";
import type { KindReview, ReviewChange } from "../../core/descriptor";
import { adoptionNotes, type CeilingChange, type LiveAccount, type UserAccessChange } from "../../core/review";
import { wantsEnabledWrite } from "./enabledHold";
import type { Shape } from "./schema";

type Change = ReviewChange<Shape>;

function userChange({ urn, name, op, olds, news }: Change): UserAccessChange | undefined {
  const base = { urn, name, username: news?.name ?? olds?.name ?? name };
  if (op === "create") {
    const impact = news?.enabled === false ? "a new gateway login, disabled" : "a new gateway login";
    return { ...base, change: "created", impact };
  }
  if (op === "delete") return { ...base, change: "deleted", impact: "the gateway login stops working" };
  if (op === "replace") {
    return { ...base, change: "replaced", impact: "a new gateway login and password; the old login stops working" };
  }
  if (!olds || !news) return undefined;
  // The same rule `up` runs decides whether `enabled` is written (the held emergency disable).
  if (wantsEnabledWrite(olds, news)) {
    if (!news.enabled) {
      return olds.enabled ? { ...base, change: "disabled", impact: "new gateway requests get 407" } : undefined;
    }
    return olds.disabledOutOfBand
      ? { ...base, change: "released", impact: "released from an emergency disable: the gateway accepts it again" }
      : { ...base, change: "enabled", impact: "the gateway accepts it again" };
  }
  if (news.enabled && !olds.enabled && olds.disabledOutOfBand) {
    return {
      ...base,
      change: "held",
      impact: "stays disabled: an emergency disable holds until reenableTrigger changes",
    };
  }
  return undefined;
}

function ceilingChanges({ urn, name, op, olds, news }: Change): CeilingChange[] {
  if (op !== "update" || !olds || !news) return [];
  return (["dailyGb", "monthlyGb"] as const).flatMap((limit): CeilingChange[] => {
    const before = olds.limits[limit];
    const after = news.limits[limit];
    if (before === after) return [];
    const change =
      after === null ? "removed" : before === null ? "added" : after > before ? "raised" : ("lowered" as const);
    return [{ urn, name, username: news.name, limit, change, before, after }];
  });
}

/**
 * A ceiling lowered or added at or below what the user already carried this day or month blocks it
 * at once: the gateway refuses its next request with 407 (contract section 7). The traffic is read
 * only for such changes.
 */
async function withTraffic(ceilings: CeilingChange[], change: Change, live: LiveAccount): Promise<CeilingChange[]> {
  const tightened = ceilings.filter((ceiling) => ceiling.change === "lowered" || ceiling.change === "added");
  const id = change.olds?.proxyUserId;
  if (tightened.length === 0 || !id) return ceilings;
  const { todayBytes, monthBytes } = await live.traffic(id);
  return ceilings.map((ceiling) => {
    if (!tightened.includes(ceiling) || ceiling.after === null) return ceiling;
    const used = ceiling.limit === "dailyGb" ? todayBytes : monthBytes;
    const usedGb = Math.round((used / BYTES_PER_GB) * 1000) / 1000;
    return { ...ceiling, usedGb, blocksNow: used >= ceiling.after * BYTES_PER_GB };
  });
}

/** What a change of a proxy user means for a reviewer: logins that start or stop working, and ceilings. */
export const proxyUserReview: KindReview<Shape> = {
  notes: (change) => [
    ...(change.op === "replace" ? ["a new gateway login with a new password; the old login stops working"] : []),
    ...(change.op === "delete" ? ["the gateway login stops working"] : []),
    ...adoptionNotes(change),
  ],
  access: async (change, live) => {
    const user = userChange(change);
    return { users: user ? [user] : [], ceilings: await withTraffic(ceilingChanges(change), change, live) };
  },
};
