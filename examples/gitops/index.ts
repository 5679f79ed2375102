import * as pulumi from "@pulumi/pulumi";
import { ApiKey, ProxyUser } from "pulumi-proxy";

interface UserSpec {
  dailyGb?: number;
  monthlyGb?: number;
  enabled?: boolean;
  /** Change after an emergency disable to re-enable the user; until then `up` keeps it disabled. */
  reenable?: string;
}

const config = new pulumi.Config();
const prefix = config.get("prefix") ?? "team";
const users = config.getObject<Record<string, UserSpec>>("users") ?? {
  crawler: { dailyGb: 20, monthlyGb: 400 },
  monitor: { dailyGb: 1, monthlyGb: 20 },
};

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

// The drift job itself needs no API key of its own: it reads through the stack's provider config.
// This key is for the team's usage reports, scoped to read statistics only.
const reports = new ApiKey("usage-reports", { name: `${prefix}-usage-reports`, scopes: ["usage:read"] });

export const team = Object.fromEntries(
  proxyUsers.map(([name, user]) => [
    name,
    { id: user.proxyUserId, username: user.username, limits: user.limits, enabled: user.enabled },
  ]),
);
export const reportsKey = { id: reports.keyId, secretHint: reports.secretHint };
