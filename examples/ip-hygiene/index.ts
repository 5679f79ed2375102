import * as pulumi from "@pulumi/pulumi";
import { IpAllocation } from "pulumi-proxy";

interface AllocationSpec {
  /** The resource name; keep it stable, it is how Pulumi tracks the allocation. */
  name: string;
  product?: "isp" | "dedicated";
  country: string;
  city?: string;
  /**
   * The address this allocation must not keep. While the allocation still holds it, `pulumi up`
   * swaps it for a fresh one; afterwards the value is a no-op, so it can stay in config.
   */
  retire?: string;
  /** Why: blacklisted (default), unreachable, slow, other or any short text. */
  reason?: string;
}

const config = new pulumi.Config();
const DEFAULT_ALLOCATIONS: AllocationSpec[] = [
  { name: "us-new-york", country: "us", city: "new york" },
  { name: "de-frankfurt", country: "de", city: "frankfurt" },
];

/**
 * The allocations to hold. A list whose entries all have a name is the whole declaration. Entries
 * without a name are edits of the defaults at the same position, as `pulumi config set --path
 * 'allocations[0].retire' …` on a stack without the list makes them; the other defaults stay, so such
 * an edit never plans a release. An entry that is neither is refused at preview.
 */
function allocationSpecs(): AllocationSpec[] {
  const configured = config.getObject<(Partial<AllocationSpec> | null)[]>("allocations");
  if (!configured) return DEFAULT_ALLOCATIONS;
  const editsDefaults = configured.some((entry) => !entry?.name);
  const base = editsDefaults ? DEFAULT_ALLOCATIONS : [];
  return Array.from({ length: Math.max(configured.length, base.length) }, (_, i) => {
    const spec = { ...base[i], ...configured[i] };
    const missing = (["name", "country"] as const).filter((key) => !spec[key]);
    if (missing.length > 0) {
      throw new pulumi.RunError(
        `ip-hygiene:allocations[${i}] has no ${missing.join(" and no ")}, and there is no default allocation at that position. ` +
          `Set allocations[${i}].${missing.join(` and allocations[${i}].`)}, or put the whole list in config as the README shows.`,
      );
    }
    return spec as AllocationSpec;
  });
}

const specs = allocationSpecs();
// Two replacements per allocation and month are free; this caps what a later one may cost (0: free only).
const maxReplacementChargeCents = config.getNumber("maxReplacementChargeCents") ?? 0;

const allocations = specs.map((spec) => ({
  name: spec.name,
  allocation: new IpAllocation(spec.name, {
    product: spec.product ?? "isp",
    country: spec.country,
    ...(spec.city !== undefined ? { city: spec.city, keepCity: true } : {}),
    // The retired address is the trigger: naming a new one swaps again, repeating one does nothing.
    ...(spec.retire !== undefined ? { replaceTrigger: spec.retire } : {}),
    replaceReason: spec.reason ?? "blacklisted",
    maxReplacementChargeCents,
  }),
}));

export const addresses = Object.fromEntries(
  allocations.map(({ name, allocation }) => [
    name,
    {
      ip: allocation.ip,
      health: allocation.health,
      blacklists: allocation.blacklists,
      freeReplacementsRemaining: allocation.freeReplacementsRemaining,
      lastReplacedIp: allocation.lastReplacedIp,
    },
  ]),
);

/**
 * Addresses to retire, as of the last refresh: run `pulumi up --refresh`, then copy each `ip` into the
 * `retire` field of its allocation in config and run `pulumi up`.
 */
export const needsReplacement = pulumi
  .all(
    allocations.map(({ name, allocation }) =>
      pulumi.all([name, allocation.ip, allocation.health, allocation.blacklists]),
    ),
  )
  .apply((rows) =>
    rows
      .filter(([, , health, blacklists]) => health === "bad" || blacklists > 0)
      .map(([name, ip, health, blacklists]) => ({ name, ip, health, blacklists })),
  );
