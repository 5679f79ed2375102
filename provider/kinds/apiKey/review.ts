import { SENSITIVE_SCOPES } from "../../../contract/keys";
import type { KindReview, ReviewChange } from "../../core/descriptor";
import { adoptionNotes, type KeyAccessChange } from "../../core/review";
import { rotationOf, type Shape } from "./schema";

type Change = ReviewChange<Shape>;

const sensitive = (scopes: string[]) =>
  scopes.filter((scope) => (SENSITIVE_SCOPES as readonly string[]).includes(scope));

const graceWords = (hours: number) =>
  hours > 0 ? `secret rotated, old one valid for ${hours} h` : "secret rotated, old one stops working at once";

/** The rotation `up` makes, by the provider's own rule, with its grace and why. */
function rotationOfChange({ op, id, olds, news }: Change) {
  if (op !== "update" || !olds || !news) return undefined;
  const rotation = rotationOf(id ?? "", olds, news);
  return rotation && { ...rotation, graceHours: news.graceHours };
}

function keyChange(change: Change): KeyAccessChange | undefined {
  const { urn, name, op, olds, news } = change;
  const base = { urn, name, keyName: news?.name ?? olds?.name ?? name };
  const oldScopes: string[] = olds?.scopes ?? [];
  const newScopes: string[] = news?.scopes ?? [];
  const gained = (scopes: string[]) => ({ addedScopes: scopes, sensitiveScopes: sensitive(scopes) });
  switch (op) {
    case "create": {
      const adopted = news?.adoptId !== undefined;
      return {
        ...base,
        change: adopted ? "adopted" : "created",
        scopes: newScopes,
        ...gained(adopted ? [] : newScopes),
        removedScopes: [],
        impact: adopted ? "an existing key comes under this stack" : "a new key and secret",
      };
    }
    case "replace":
      return {
        ...base,
        change: "replaced",
        scopes: newScopes,
        previousScopes: oldScopes,
        ...gained(newScopes.filter((scope) => !oldScopes.includes(scope))),
        removedScopes: oldScopes.filter((scope) => !newScopes.includes(scope)),
        impact:
          "a new key with a new secret; the old key is revoked at once, so integrations using its secret break until they get the new one",
      };
    case "delete":
      return {
        ...base,
        change: "revoked",
        scopes: oldScopes,
        ...gained([]),
        removedScopes: oldScopes,
        impact: "every secret of the key stops working at once: integrations using it break",
      };
    case "update": {
      const rotation = rotationOfChange(change);
      if (!rotation) return undefined;
      return {
        ...base,
        change: "rotated",
        scopes: newScopes,
        ...gained([]),
        removedScopes: [],
        graceHours: rotation.graceHours,
        reason: rotation.reason,
        impact: graceWords(rotation.graceHours),
      };
    }
  }
}

/** What a change of a key means for a reviewer: secrets that start or stop working, and scopes gained. */
export const apiKeyReview: KindReview<Shape> = {
  notes: (change) => {
    const rotation = rotationOfChange(change);
    return [
      ...(rotation ? [`${graceWords(rotation.graceHours)} (${rotation.reason})`] : []),
      ...(change.op === "replace" ? ["a new key and secret are created, then the old key is revoked at once"] : []),
      ...(change.op === "delete" ? ["revoked: every secret of the key stops working at once"] : []),
      ...adoptionNotes(change),
    ];
  },
  access: async (change) => {
    const key = keyChange(change);
    return { keys: key ? [key] : [] };
  },
};
