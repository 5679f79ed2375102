import * as pulumi from "@pulumi/pulumi";
import { ApiKey, IpAllocation, ProxyUser } from "pulumi-proxy";
import type { Scope } from "pulumi-proxy/sdk";

interface UserSpec {
  dailyGb?: number;
  monthlyGb?: number;
  enabled?: boolean;
  /** Change after an emergency disable to re-enable the user; until then `up` keeps it disabled. */
  reenable?: string;
  /** `true` deletes this user (the only way to drop one of the default team). */
  remove?: boolean;
}

interface KeySpec {
  scopes: Scope[];
  /** Change to rotate the secret; the old one keeps working for `graceHours` (default 24). */
  rotation?: string;
  graceHours?: number;
  /** `true` revokes this key (the only way to drop a default one). */
  remove?: boolean;
}

interface AddressSpec {
  product: "isp" | "dedicated";
  country: string;
  city?: string;
  /** Keep a replacement in `city` (it fails when the city has no free address) instead of anywhere in the country. */
  keepCity?: boolean;
  /** Change to swap the address in place, e.g. to the address being retired. */
  replace?: string;
  reason?: string;
  /** The most a replacement beyond this month's two free ones may cost; absent means free ones only. */
  maxChargeCents?: number;
}

/**
 * The fields each config map takes, checked at preview: a misspelt or unknown field (`keepcity`) is
 * refused by name instead of silently doing nothing. `Record<keyof …>` makes the compiler hold these
 * lists to the interfaces above.
 */
const FIELDS: { [map in "users" | "keys" | "addresses"]: Record<string, true> } = {
  users: { dailyGb: true, monthlyGb: true, enabled: true, reenable: true, remove: true } satisfies Record<
    keyof UserSpec,
    true
  >,
  keys: { scopes: true, rotation: true, graceHours: true, remove: true } satisfies Record<keyof KeySpec, true>,
  addresses: {
    product: true,
    country: true,
    city: true,
    keepCity: true,
    replace: true,
    reason: true,
    maxChargeCents: true,
  } satisfies Record<keyof AddressSpec, true>,
};

const config = new pulumi.Config();
const prefix = config.get("prefix") ?? "team";

/** The configured entries of one map, each field checked against FIELDS. */
function configured<T>(key: keyof typeof FIELDS): Record<string, T> {
  const entries = config.getObject<Record<string, T>>(key) ?? {};
  const known = Object.keys(FIELDS[key]);
  for (const [name, spec] of Object.entries(entries)) {
    const unknown = Object.keys(spec ?? {}).find((field) => !known.includes(field));
    if (unknown === undefined) continue;
    throw new pulumi.RunError(
      `gitops:${key}: entry "${name}" has the field "${unknown}", which this program does not know, so it would do nothing. ` +
        `The fields of ${key} are ${known.join(", ")}. Remove it with: pulumi config rm --path '${key}.${name}.${unknown}'`,
    );
  }
  return entries;
}

/**
 * A config map laid over its defaults, entry by entry and field by field, so a partial edit such as
 * `pulumi config set --path 'users.monitor.reenable' …` changes that field alone and never drops the
 * other defaults. An entry goes only when asked: `remove: true`.
 */
function overDefaults<T extends { remove?: boolean }>(
  key: "users" | "keys",
  defaults: Record<string, T>,
): Record<string, T> {
  const edits = configured<Partial<T>>(key);
  return Object.fromEntries(
    [...new Set([...Object.keys(defaults), ...Object.keys(edits)])]
      .map((name) => [name, { ...defaults[name], ...edits[name] } as T] as const)
      .filter(([, spec]) => spec.remove !== true),
  );
}

const users = overDefaults<UserSpec>("users", {
  crawler: { dailyGb: 20, monthlyGb: 400 },
  monitor: { dailyGb: 1, monthlyGb: 20 },
});

const proxyUsers = Object.entries(users).map(
  ([name, spec]) =>
    [
      name,
      new ProxyUser(name, {
        name: `${prefix}-${name}`,
        limits: { dailyGb: spec.dailyGb ?? null, monthlyGb: spec.monthlyGb ?? null },
        enabled: spec.enabled ?? true,
        ...(spec.reenable !== undefined ? { reenableTrigger: spec.reenable } : {}),
      }),
    ] as const,
);

// The pipeline itself needs no API key of its own: it works through the stack's provider config.
// Each integration gets its own key; by default only the team's usage reports, which read statistics.
const keySpecs = overDefaults<KeySpec>("keys", { "usage-reports": { scopes: ["usage:read"] } });
const keys = Object.fromEntries(
  Object.entries(keySpecs).map(([name, spec]) => [
    name,
    new ApiKey(name, {
      name: `${prefix}-${name}`,
      scopes: spec.scopes,
      ...(spec.rotation !== undefined ? { rotationTrigger: spec.rotation } : {}),
      ...(spec.graceHours !== undefined ? { graceHours: spec.graceHours } : {}),
    }),
  ]),
);

// Addresses are charged: a plan shows the cost of every allocation and replacement before merge.
const addresses = Object.entries(configured<AddressSpec>("addresses")).map(
  ([name, spec]) =>
    new IpAllocation(name, {
      product: spec.product,
      country: spec.country,
      ...(spec.city !== undefined ? { city: spec.city } : {}),
      ...(spec.keepCity !== undefined ? { keepCity: spec.keepCity } : {}),
      ...(spec.replace !== undefined ? { replaceTrigger: spec.replace } : {}),
      ...(spec.reason !== undefined ? { replaceReason: spec.reason } : {}),
      ...(spec.maxChargeCents !== undefined ? { maxReplacementChargeCents: spec.maxChargeCents } : {}),
    }),
);

export const team = Object.fromEntries(
  proxyUsers.map(([name, user]) => [
    name,
    { id: user.proxyUserId, username: user.username, limits: user.limits, enabled: user.enabled },
  ]),
);
/**
 * Secret: each gateway login's username and password, for the client that sends traffic through it.
 * `pulumi stack output gatewayLogins --show-secrets --json` shows them (README, "Handing out credentials").
 */
export const gatewayLogins = pulumi.secret(
  Object.fromEntries(proxyUsers.map(([name, user]) => [name, { username: user.username, password: user.password }])),
);
export const apiKeys = Object.fromEntries(
  Object.entries(keys).map(([name, key]) => [name, { id: key.keyId, scopes: key.scopes, secretHint: key.secretHint }]),
);
/**
 * Secret: each key's secret by name, for the integration that uses it. After a `rotation` it holds the
 * new secret; the old one keeps working for `graceHours`.
 */
export const keySecrets = pulumi.secret(
  Object.fromEntries(Object.entries(keys).map(([name, key]) => [name, key.secret])),
);
export const ips = addresses.map((address) => address.ip);
