import { type PolicyConfigSchema, PolicyPack, type ResourceValidationPolicy } from "@pulumi/policy";
import { RULES, violationsOf } from "./rules";

export { type ProxyRule, RULES } from "./rules";

/** The pack's name, as `pulumi preview --policy-pack` prints it and the policy config file does not need. */
export const POLICY_PACK_NAME = "pulumi-proxy";

/** Each rule as a `@pulumi/policy` resource policy: its level and numbers come from the policy config file. */
export const proxyPolicies: ResourceValidationPolicy[] = RULES.map((rule) => ({
  name: rule.name,
  description: rule.description,
  enforcementLevel: rule.enforcementLevel,
  configSchema: { properties: rule.config as PolicyConfigSchema["properties"] },
  validateResource: (args, reportViolation) => {
    for (const violation of violationsOf(rule, args)) reportViolation(violation);
  },
}));

/**
 * Starts the pack: the whole `index.js` of a policy pack folder is
 * `require("pulumi-proxy/policy").proxyPolicyPack();` (`npx pulumi-proxy policy init <dir>` writes it).
 */
export function proxyPolicyPack(name = POLICY_PACK_NAME): PolicyPack {
  return new PolicyPack(name, { policies: proxyPolicies });
}
