import * as pulumi from "@pulumi/pulumi";
import { ApiKey, type Scope } from "pulumi-proxy";

const config = new pulumi.Config();
const prefix = config.get("prefix") ?? "scoped";
// Change this value (a date works well) to rotate every secret in place; ids and scopes stay.
const rotation = config.get("rotation") ?? "initial";
// The old secrets keep working this long after a rotation, so integrations can pick up the new ones.
const graceHours = config.getNumber("graceHours") ?? 24;

/** One key per integration, with only the scopes that integration needs. */
const integrations: Record<string, Scope[]> = {
  // Dashboards read traffic statistics, nothing else.
  dashboards: ["usage:read"],
  // Onboarding creates proxy users with their traffic ceilings.
  onboarding: ["proxy-users:read", "proxy-users:write", "limits:write"],
  // On-call may disable a proxy user in an emergency, but not change ceilings or money.
  oncall: ["proxy-users:read", "proxy-users:write"],
  // Finance reads invoices and the balance; it cannot top up or cancel.
  finance: ["billing:read"],
};

const keys = Object.entries(integrations).map(
  ([integration, scopes]) =>
    [
      integration,
      new ApiKey(integration, { name: `${prefix}-${integration}`, scopes, rotationTrigger: rotation, graceHours }),
    ] as const,
);

/** Safe to show: ids, scopes and the last four characters of each secret. */
export const keyInfo = Object.fromEntries(
  keys.map(([integration, key]) => [
    integration,
    {
      id: key.keyId,
      scopes: key.scopes,
      secretHint: key.secretHint,
      lastRotatedAt: key.lastRotatedAt,
      previousSecretExpiresAt: key.previousSecretExpiresAt,
    },
  ]),
);
/** Secret: hand each value to its integration's secret store, e.g. `pulumi stack output secrets --show-secrets`. */
export const secrets = pulumi.secret(Object.fromEntries(keys.map(([integration, key]) => [integration, key.secret])));
