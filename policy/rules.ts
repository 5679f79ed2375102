import type { EnforcementLevel, ResourceValidationArgs } from "@pulumi/policy";
import { IpProduct } from "../contract";
import { SENSITIVE_SCOPES } from "../contract/keys";
import { DAY_MS } from "../contract/pricing";
import { kindOfType, type ResourceKind } from "../provider/kinds";

/**
 * The pack's rules: each checks one kind of resource, dynamic (`pulumi-nodejs:dynamic/proxy:ApiKey`)
 * or native (`proxy:index:ApiKey`) alike, from its inputs as `check` normalized them. A message names
 * the resource, what breaks the rule and the fix; it quotes names and numbers, never a secret.
 */

/** One rule: its default level and numbers (the policy config file overrides both), and its check. */
export interface ProxyRule<C extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  description: string;
  kind: ResourceKind;
  enforcementLevel: EnforcementLevel;
  /** The settings and their defaults, each with its JSON schema type. */
  config: {
    [K in keyof C]: {
      type: "integer" | "number" | "array";
      items?: { type: "string" };
      default: C[K];
      description: string;
    };
  };
  /** The violations of this resource's inputs: each a sentence that ends with the fix. */
  check(props: Record<string, unknown>, config: C, resourceName: string): string[];
}

const rule = <C extends Record<string, unknown>>(definition: ProxyRule<C>) => definition as unknown as ProxyRule;

const listed = (values: readonly string[]) => values.map((value) => `"${value}"`).join(", ");

export const RULES: ProxyRule[] = [
  rule<{ maxMonthlyGb: number }>({
    name: "proxy-user-monthly-ceiling",
    description: "Every proxy user has a monthly traffic ceiling, at most the configured maximum.",
    kind: "proxyUser",
    enforcementLevel: "mandatory",
    config: { maxMonthlyGb: { type: "number", default: 1000, description: "The highest monthly ceiling, in GB." } },
    check(props, { maxMonthlyGb }, name) {
      const monthly = (props.limits as { monthlyGb?: number | null } | undefined)?.monthlyGb;
      if (typeof monthly === "number" && monthly <= maxMonthlyGb) return [];
      const found = typeof monthly === "number" ? `is ${monthly} GB` : "is not set (no ceiling)";
      return [`ProxyUser "${name}": limits.monthlyGb ${found}; set it to at most ${maxMonthlyGb}.`];
    },
  }),
  rule<{ allowedNames: string[] }>({
    name: "key-sensitive-scopes-allow-list",
    description: `Only keys whose name is on the allow-list hold ${listed(SENSITIVE_SCOPES)}.`,
    kind: "apiKey",
    enforcementLevel: "mandatory",
    config: {
      allowedNames: {
        type: "array",
        items: { type: "string" },
        default: [],
        description: "Key names (the key's `name`) that may hold them.",
      },
    },
    check(props, { allowedNames }, name) {
      const scopes = Array.isArray(props.scopes) ? (props.scopes as string[]) : [];
      const sensitive = scopes.filter((scope) => (SENSITIVE_SCOPES as readonly string[]).includes(scope));
      const keyName = typeof props.name === "string" ? props.name : name;
      if (sensitive.length === 0 || allowedNames.includes(keyName)) return [];
      return [
        `ApiKey "${name}": the key "${keyName}" holds ${listed(sensitive)} but is not on the allow-list (${allowedNames.length ? listed(allowedNames) : "empty"}); remove those scopes, or add "${keyName}" to allowedNames.`,
      ];
    },
  }),
  rule<{ maxDays: number }>({
    name: "key-rotation-or-expiry",
    description: "Every key rotates (rotateAfterDays) or expires (expiresAt) within the configured number of days.",
    kind: "apiKey",
    enforcementLevel: "advisory",
    config: { maxDays: { type: "integer", default: 90, description: "The most days a secret may live." } },
    check(props, { maxDays }, name) {
      const rotateAfterDays = typeof props.rotateAfterDays === "number" ? props.rotateAfterDays : undefined;
      const expiresAt = typeof props.expiresAt === "string" ? Date.parse(props.expiresAt) : Number.NaN;
      if (rotateAfterDays !== undefined && rotateAfterDays <= maxDays) return [];
      if (expiresAt <= Date.now() + maxDays * DAY_MS) return [];
      const found = [
        rotateAfterDays !== undefined ? `rotateAfterDays is ${rotateAfterDays}` : "rotateAfterDays is not set",
        Number.isNaN(expiresAt) ? "expiresAt is not set" : `expiresAt is ${props.expiresAt}`,
      ];
      return [`ApiKey "${name}": ${found.join(" and ")}; set rotateAfterDays to at most ${maxDays}.`];
    },
  }),
  rule<{ minGraceHours: number }>({
    name: "key-rotation-grace",
    description: "A rotation keeps the previous secret working for at least the configured hours.",
    kind: "apiKey",
    enforcementLevel: "advisory",
    config: { minGraceHours: { type: "integer", default: 1, description: "The least graceHours a key may have." } },
    check(props, { minGraceHours }, name) {
      const grace = typeof props.graceHours === "number" ? props.graceHours : undefined;
      if (grace === undefined || grace >= minGraceHours) return [];
      return [`ApiKey "${name}": graceHours is ${grace}; set it to at least ${minGraceHours}.`];
    },
  }),
  rule<{ maxCents: number }>({
    name: "ip-max-replacement-charge",
    description: "An address's maxReplacementChargeCents is at most the configured amount.",
    kind: "ipAllocation",
    enforcementLevel: "advisory",
    config: { maxCents: { type: "integer", default: 500, description: "The highest replacement charge, in cents." } },
    check(props, { maxCents }, name) {
      const ceiling = props.maxReplacementChargeCents;
      if (typeof ceiling !== "number" || ceiling <= maxCents) return [];
      return [`IpAllocation "${name}": maxReplacementChargeCents is ${ceiling}; set it to at most ${maxCents}.`];
    },
  }),
  rule<{ products: string[]; countries: string[] }>({
    name: "ip-allowed-products-countries",
    description: "Addresses use only the configured products and countries (an empty list allows any).",
    kind: "ipAllocation",
    enforcementLevel: "advisory",
    config: {
      products: {
        type: "array",
        items: { type: "string" },
        default: [...IpProduct.options],
        description: "Products allowed.",
      },
      countries: {
        type: "array",
        items: { type: "string" },
        default: [],
        description: "Country codes allowed; empty allows any.",
      },
    },
    check(props, { products, countries }, name) {
      const found: string[] = [];
      const { product, country } = props as { product?: unknown; country?: unknown };
      if (typeof product === "string" && products.length > 0 && !products.includes(product)) {
        found.push(`product "${product}" is not allowed; use one of ${listed(products)}`);
      }
      const code = typeof country === "string" ? country.toLowerCase() : undefined;
      if (code && countries.length > 0 && !countries.map((c) => c.toLowerCase()).includes(code)) {
        found.push(`country "${code}" is not allowed; use one of ${listed(countries)}`);
      }
      return found.map((text) => `IpAllocation "${name}": ${text}.`);
    },
  }),
];

/** The rule's violations for one resource the engine reports, or none when the rule is for another kind. */
export function violationsOf(rule: ProxyRule, args: ResourceValidationArgs): string[] {
  if (kindOfType(args.type)?.kind !== rule.kind) return [];
  const defaults = Object.fromEntries(Object.entries(rule.config).map(([key, field]) => [key, field.default]));
  return rule.check(args.props, { ...defaults, ...args.getConfig<Record<string, unknown>>() }, args.name);
}
