import { z } from "zod";
import { dailyWithinMonthly, Gigabytes, ProxyUserId, ProxyUserName, Timestamp } from "../../../contract";
import type { ProxyClient, ProxyUser as WireProxyUser } from "../../../sdk";
import { walkable } from "../../core/coalescer";
import * as d from "../../core/descriptor";
import { enabledHoldOf, wantsEnabledWrite } from "./enabledHold";

/** The model of a proxy user: its inputs and outputs, one zod field each. */
/**
 * A ceiling in GB. `pulumi config set --path users.x.limits.monthlyGb 2.5` stores a decimal as text
 * (whole numbers become numbers), so a decimal written as plain text is read as the number it spells.
 */
const Ceiling = z.preprocess(
  (value) => (typeof value === "string" && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value),
  Gigabytes,
);

const Limits = z
  .strictObject(
    {
      dailyGb: Ceiling.default(null).describe(
        "Daily ceiling in GB (0–100000, at most 3 decimals); null or absent means no ceiling.",
      ),
      monthlyGb: Ceiling.default(null).describe(
        "Monthly ceiling in GB (0–100000, at most 3 decimals); null or absent means no ceiling.",
      ),
    },
    {
      error: (issue) => (issue.code === "unrecognized_keys" ? "is not a limit; use dailyGb and monthlyGb" : undefined),
    },
  )
  .refine((limits) => dailyWithinMonthly({ daily_gb: limits.dailyGb, monthly_gb: limits.monthlyGb }), {
    path: ["dailyGb"],
    error: (issue) => {
      const limits = issue.input as { dailyGb: number; monthlyGb: number };
      return `(${limits.dailyGb}) must not exceed limits.monthlyGb (${limits.monthlyGb})`;
    },
  });
export type TrafficLimits = z.input<typeof Limits>;

/**
 * The model's fields carry their documentation (`describe`): the native schema, and through it every
 * generated SDK's docstrings, read it from here.
 */
export const inputs = {
  name: d.replaceOnChange(
    ProxyUserName.describe(
      "Gateway login: 1–63 of a-z, 0-9 and '-', starting with a letter. Changing it replaces the user.",
    ),
  ),
  limits: Limits.default({ dailyGb: null, monthlyGb: null }).describe(
    'Traffic ceilings, updated in place. Omitted ceilings mean "no ceiling".',
  ),
  enabled: d.changeDecidedBy(
    z.boolean().default(true).describe("Whether the user may use the gateways (default true), updated in place."),
    (olds, news) => (wantsEnabledWrite(enabledHoldOf(olds), enabledHoldOf(news)) ? "update" : "none"),
  ),
  reenableTrigger: d.Trigger.optional().describe(
    "A user disabled out of band (an emergency disable) stays disabled even though `enabled` is true, so " +
      "`pulumi up` never silently undoes it. Change this value to acknowledge and re-enable.",
  ),
  adoptId: d.createOnly(
    ProxyUserId.optional().describe("Take over the existing proxy user with this id (pu_…) instead of creating one."),
  ),
};

export const outputs = {
  proxyUserId: z.string().describe("The proxy user's id (pu_…)."),
  name: z.string(),
  username: z.string().describe("The gateway login."),
  password: z
    .string()
    .nullable()
    .describe("The gateway password: returned once by the API at creation; null for adopted and imported users."),
  limits: z.object({ dailyGb: z.number().nullable(), monthlyGb: z.number().nullable() }),
  enabled: z.boolean(),
  disabledOutOfBand: z
    .boolean()
    .default(false)
    .describe("True while the user is disabled by someone other than this stack."),
  createdAt: Timestamp.describe("When the user was created (ISO 8601, UTC)."),
  updatedAt: Timestamp.describe("When the user last changed (ISO 8601, UTC)."),
};

export type Shape = d.Descriptor<typeof inputs, typeof outputs, WireProxyUser>;
export type Inputs = d.InputsOf<Shape>;
export type Stored = d.StoredOf<Shape>;

export const label = (props: { name?: unknown }) => `ProxyUser "${typeof props.name === "string" ? props.name : "?"}"`;
/** The list a refresh walks. */
export const reads = { kind: "proxyUser", collection: (client: ProxyClient) => walkable(client.proxyUsers) } as const;
