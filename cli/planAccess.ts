import { wantsEnabledWrite } from "../provider/enabledHold";
import {
  type AccessSection,
  type CeilingChange,
  type KeyAccessChange,
  SENSITIVE_SCOPES,
  type UserAccessChange,
} from "./planModel";
import type { PlannedStep } from "./planSteps";

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
const sensitive = (scopes: string[]) =>
  scopes.filter((scope) => (SENSITIVE_SCOPES as readonly string[]).includes(scope));

/** The recorded object: its inputs, overlaid by what the API reported (refreshed with --refresh). */
const recorded = (step: PlannedStep): Record<string, unknown> => ({ ...step.oldInputs, ...step.oldOutputs });

function keyChange(step: PlannedStep): KeyAccessChange | undefined {
  const olds = recorded(step);
  const news = step.newInputs ?? {};
  const base = { urn: step.urn, name: step.name, keyName: String(news.name ?? olds.name ?? step.name) };
  const oldScopes = strings(olds.scopes);
  const newScopes = strings(news.scopes);
  const gained = (scopes: string[]) => ({ addedScopes: scopes, sensitiveScopes: sensitive(scopes) });
  switch (step.op) {
    case "create": {
      const adopted = news.adoptId !== undefined;
      return {
        ...base,
        change: adopted ? "adopted" : "created",
        scopes: newScopes,
        ...gained(adopted ? [] : newScopes),
        removedScopes: [],
        impact: adopted ? "an existing key comes under this stack" : "a new key and secret",
      };
    }
    case "replace": {
      const added = newScopes.filter((scope) => !oldScopes.includes(scope));
      const removed = oldScopes.filter((scope) => !newScopes.includes(scope));
      return {
        ...base,
        change: "replaced",
        scopes: newScopes,
        previousScopes: oldScopes,
        ...gained(added),
        removedScopes: removed,
        impact:
          "a new key with a new secret; the old key is revoked at once, so integrations using its secret break until they get the new one",
      };
    }
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
      if (olds.rotationTrigger === news.rotationTrigger) return undefined;
      const graceHours = Number(news.graceHours ?? 24);
      return {
        ...base,
        change: "rotated",
        scopes: newScopes,
        ...gained([]),
        removedScopes: [],
        graceHours,
        impact:
          graceHours > 0
            ? `secret rotated, old one valid for ${graceHours} h`
            : "secret rotated, old one stops working at once",
      };
    }
  }
}

function userChange(step: PlannedStep): UserAccessChange | undefined {
  const olds = recorded(step);
  const news = step.newInputs ?? {};
  const base = { urn: step.urn, name: step.name, username: String(news.name ?? olds.name ?? step.name) };
  if (step.op === "create") {
    const enabled = news.enabled !== false;
    return { ...base, change: "created", impact: enabled ? "a new gateway login" : "a new gateway login, disabled" };
  }
  if (step.op === "delete") return { ...base, change: "deleted", impact: "the gateway login stops working" };
  if (step.op === "replace") {
    return { ...base, change: "replaced", impact: "a new gateway login and password; the old login stops working" };
  }
  const hold = {
    enabled: olds.enabled !== false,
    disabledOutOfBand: olds.disabledOutOfBand === true,
    reenableTrigger: typeof olds.reenableTrigger === "string" ? olds.reenableTrigger : undefined,
  };
  const wanted = {
    enabled: news.enabled !== false,
    reenableTrigger: typeof news.reenableTrigger === "string" ? news.reenableTrigger : undefined,
  };
  if (wantsEnabledWrite(hold, wanted)) {
    if (!wanted.enabled) {
      return hold.enabled ? { ...base, change: "disabled", impact: "new gateway requests get 407" } : undefined;
    }
    return hold.disabledOutOfBand
      ? { ...base, change: "released", impact: "released from an emergency disable: the gateway accepts it again" }
      : { ...base, change: "enabled", impact: "the gateway accepts it again" };
  }
  if (wanted.enabled && !hold.enabled && hold.disabledOutOfBand) {
    return {
      ...base,
      change: "held",
      impact: "stays disabled: an emergency disable holds until reenableTrigger changes",
    };
  }
  return undefined;
}

function gb(value: unknown): number | null {
  return typeof value === "number" ? value : null;
}

function ceilingChanges(step: PlannedStep): CeilingChange[] {
  if (step.op !== "update") return [];
  const olds = (recorded(step).limits ?? {}) as Record<string, unknown>;
  const news = (step.newInputs?.limits ?? {}) as Record<string, unknown>;
  const username = String(step.newInputs?.name ?? step.name);
  return (["dailyGb", "monthlyGb"] as const).flatMap((limit): CeilingChange[] => {
    const before = gb(olds[limit]);
    const after = gb(news[limit]);
    if (before === after) return [];
    const change =
      after === null ? "removed" : before === null ? "added" : after > before ? "raised" : ("lowered" as const);
    return [{ urn: step.urn, name: step.name, username, limit, change, before, after }];
  });
}

/** Who gains or loses access: keys and their scopes, gateway logins, and traffic ceilings. */
export function describeAccess(steps: PlannedStep[]): AccessSection {
  const keys = steps.filter((step) => step.type === "proxy:ApiKey").flatMap((step) => keyChange(step) ?? []);
  const userSteps = steps.filter((step) => step.type === "proxy:ProxyUser");
  return {
    keys,
    users: userSteps.flatMap((step) => userChange(step) ?? []),
    ceilings: userSteps.flatMap(ceilingChanges),
  };
}
