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
  /** Change to swap the address in place, e.g. to the address being retired. */
  replace?: string;
  reason?: string;
  /** The most a replacement beyond this month's two free ones may cost; absent means free ones only. */
  maxChargeCents?: number;
}

const config = new pulumi.Config();
const prefix = config.get("prefix") ?? "team";

/**
 * A config map laid over its defaults, entry by entry and field by field, so a partial edit such as
 * `pulumi config set --path 'users.monitor.reenable' …` changes that field alone and never drops the
 * other defaults. An entry goes only when asked: `remove: true`.
 */
function overDefaults<T extends { remove?: boolean }>(key: string, defaults: Record<string, T>): Record<string, T> {
  const configured = config.getObject<Record<string, Partial<T>>>(key) ?? {};
  return Object.fromEntries(
    [...new Set([...Object.keys(defaults), ...Object.keys(configured)])]
      .map((name) => [name, { ...defaults[name], ...configured[name] } as T] as const)
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
const addresses = Object.entries(config.getObject<Record<string, AddressSpec>>("addresses") ?? {}).map(
  ([name, spec]) =>
    new IpAllocation(name, {
      product: spec.product,
      country: spec.country,
      ...(spec.city !== undefined ? { city: spec.city } : {}),
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
export const apiKeys = Object.fromEntries(
  Object.entries(keys).map(([name, key]) => [name, { id: key.keyId, scopes: key.scopes, secretHint: key.secretHint }]),
);
export const ips = addresses.map((address) => address.ip);
