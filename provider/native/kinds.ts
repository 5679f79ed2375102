/**
 * The native provider's view of the kinds: each descriptor of provider/kinds/index.ts under its token, with
 * the dynamic handler's methods (check, create, read, update, delete) over the same rules, and the
 * descriptor's own per-input diff. Everything else in provider/native/ sees only `NativeKind`.
 */
import { type Descriptor, diffOf, effectOf, NAME_INPUT, readInputs, upgradeState } from "../core/descriptor";
import { PartialFailure } from "../core/errors";
import type { Handler } from "../core/handlers";
import { IDENTITY_INPUT, identityDigest } from "../core/idempotency";
import {
  CONFIG_DESCRIPTIONS,
  CONFIG_KEYS,
  CREDENTIAL_ENV,
  CREDENTIAL_KEYS,
  providerSettings,
  SETTING_KEYS,
} from "../core/settings";
import { providerFront } from "../front";
import { KINDS as DESCRIPTORS } from "../kinds";
import type { Properties } from "./protocol";

export const PACKAGE = "proxy";

export interface NativeKind {
  /** `proxy:index:ProxyUser` */
  token: string;
  /** `ProxyUser`, for messages. */
  name: string;
  declaration: Descriptor;
  handler: Handler;
}

/** The plugin's own provider state: its config, client and coalesced reads. */
export const front = providerFront("pulumi-proxy-provider");

export const KINDS: readonly NativeKind[] = DESCRIPTORS.map((descriptor) => ({
  token: `${PACKAGE}:index:${descriptor.type}`,
  name: descriptor.type,
  declaration: descriptor as Descriptor,
  handler: front.handlers[descriptor.kind],
}));

export function kindOf(token: string): NativeKind {
  const kind = KINDS.find((candidate) => candidate.token === token);
  if (!kind) {
    throw new Error(
      `pulumi-proxy: ${token} is not a resource of this provider; use one of ${KINDS.map((k) => k.token).join(", ")}.`,
    );
  }
  return kind;
}

const unprefixed = (full: string) => full.slice(`${PACKAGE}:`.length);

/** The provider's config by its key without the package prefix (`apiUrl`); `secret` ones are stored encrypted. */
export const CONFIG: readonly {
  key: string;
  type: "string" | "integer";
  description: string;
  secret?: boolean;
  environment?: string;
}[] = CONFIG_KEYS.map((full) => {
  const environment = (CREDENTIAL_ENV as Partial<Record<string, string>>)[full];
  return {
    key: unprefixed(full),
    type: (SETTING_KEYS as readonly string[]).includes(full) ? "integer" : "string",
    description: CONFIG_DESCRIPTIONS[full],
    ...(full === CREDENTIAL_KEYS[1] ? { secret: true } : {}),
    ...(environment ? { environment } : {}),
  };
});

/** Each setting the provider would refuse at its first request, refused when the engine checks the config. */
export function configFailures(config: Properties): { property: string; reason: string }[] {
  return SETTING_KEYS.flatMap((setting) => {
    try {
      // One setting at a time, so that each bad one is named.
      providerSettings((full) => (full === setting ? stringSetting(config, full) : undefined));
      return [];
    } catch (error) {
      return [{ property: unprefixed(setting), reason: (error as Error).message }];
    }
  });
}

function stringSetting(config: Properties, full: string): string | undefined {
  const value = config[unprefixed(full)];
  return value === undefined || value === null || value === "" ? undefined : String(value);
}

/** An object the rules created before a later step failed: the engine records it instead of orphaning it. */
export function partiallyCreated(error: unknown): PartialFailure | undefined {
  return error instanceof PartialFailure ? error : undefined;
}

/** Hands the provider's config to the plugin's front, with the same environment fallback as the dynamic provider. */
export function configureFrom(config: Properties): void {
  front.configure((full) => stringSetting(config, full));
}

/**
 * The idempotency identity (idempotency.ts) from the URN, which names the stack, the project, the
 * type chain of the parents and the resource: unique within a stack, the same on every run. The URN
 * holds no organization, so the digest has none. The name goes along too, for errors (NAME_INPUT).
 */
export function withIdentity(urn: string, inputs: Properties): Properties {
  const [head = "", project = "", qualifiedType = "", ...rest] = urn.split("::");
  const stack = head.split(":").slice(2).join(":");
  const name = rest.join("::");
  const types = qualifiedType.split("$");
  const type = types.pop() ?? "";
  const identity = identityDigest({ organization: "", project, stack, type, name, parents: types.reverse() });
  return { ...inputs, [IDENTITY_INPUT]: identity, [NAME_INPUT]: name };
}

export type ChangeKind = "update" | "replace";

export interface DetailedDiff {
  changes: boolean;
  replaces: string[];
  /** Each input whose change alone makes the rules act, and whether that change replaces. */
  properties: Record<string, ChangeKind>;
}

function inputKeys(kind: NativeKind): string[] {
  return Object.keys(kind.declaration.inputs);
}

/** The descriptor's diff, per input: the same `diffOf` the dynamic resources and the plan ask. */
export function detailedDiff(kind: NativeKind, olds: Properties, news: Properties): DetailedDiff {
  const { updates, replaces } = diffOf(
    kind.declaration,
    upgradeState(kind.declaration, olds),
    readInputs(kind.declaration, news),
  );
  const properties: Record<string, ChangeKind> = {};
  for (const key of updates) properties[key] = "update";
  for (const key of replaces) properties[key] = "replace";
  return { changes: updates.length + replaces.length > 0, replaces, properties };
}

/** The inputs whose every change replaces the resource (the schema's replaceOnChanges), as marked on the field. */
export function replaceOnChanges(kind: NativeKind): string[] {
  return Object.entries(kind.declaration.inputs)
    .filter(([, field]) => effectOf(field) === "replace")
    .map(([key]) => key);
}

/**
 * The inputs of an imported resource: each input the API reports back as an output of the same name
 * (the name, the limits, the scopes, the place), so that a program declaring them shows no change.
 * What the API does not report (triggers, settings of the next replacement) is left to its default.
 */
export function importedInputs(kind: NativeKind, state: Properties): Properties {
  const reported = inputKeys(kind).filter((key) => key in kind.declaration.outputs && state[key] != null);
  return Object.fromEntries(reported.map((key) => [key, state[key]]));
}

/** Secret outputs the API gives only when the object is created or rotated, which an import therefore lacks. */
export function missingSecrets(kind: NativeKind, state: Properties): string[] {
  return kind.declaration.secretOutputs.filter((key) => state[key] == null);
}
