import type { DeclaredResource, StackSpec } from "./cliStack";

/**
 * The mixed stack the crash benchmark kills, and the five phases it kills it in. Each phase is the
 * spec to deploy (or a destroy) and the writes it should send, so a kill point can be drawn among them.
 */

export type PhaseName = "create" | "update" | "rotate" | "replace" | "destroy";

export interface Phase {
  name: PhaseName;
  /** Absent for destroy. */
  spec?: StackSpec;
  /** State-changing requests the phase sends when nothing goes wrong. */
  writes: number;
}

export interface MixedShape {
  users: number;
  keys: number;
  ips: number;
}

const CITIES = [
  { country: "us", city: "new york" },
  { country: "de", city: "berlin" },
] as const;

const pad = (i: number) => String(i).padStart(2, "0");

interface Generation {
  limitsBump: number;
  rotation: number;
  replacement: number;
  /** The first `replaced` users and keys are replaced (renamed, rescoped) in the replace phase. */
  replaced: boolean;
}

/** The kinds spread evenly through the declaration order, so that a kill anywhere in a phase finds each kind in flight. */
function interleaved(...lists: DeclaredResource[][]): DeclaredResource[] {
  return lists
    .flatMap((list) => list.map((resource, i) => ({ resource, at: (i + 0.5) / list.length })))
    .sort((a, b) => a.at - b.at)
    .map(({ resource }) => resource);
}

function spec(shape: MixedShape, g: Generation): StackSpec {
  const users: DeclaredResource[] = [];
  const keys: DeclaredResource[] = [];
  const ips: DeclaredResource[] = [];
  for (let i = 0; i < shape.users; i++) {
    const renamed = g.replaced && i < 2;
    users.push({
      type: "ProxyUser",
      name: `user-${pad(i)}`,
      args: {
        name: renamed ? `crash-user-${pad(i)}-b` : `crash-user-${pad(i)}`,
        limits: { dailyGb: 1 + (i % 3), monthlyGb: 100 + g.limitsBump },
      },
    });
  }
  for (let i = 0; i < shape.keys; i++) {
    const rescoped = g.replaced && i < 2;
    keys.push({
      type: "ApiKey",
      name: `key-${pad(i)}`,
      args: {
        name: `crash-key-${pad(i)}`,
        scopes: rescoped ? ["usage:read", "proxy-users:read"] : ["usage:read"],
        rotationTrigger: `r${g.rotation}`,
        graceHours: 0,
      },
    });
  }
  for (let i = 0; i < shape.ips; i++) {
    const place = CITIES[i % CITIES.length] as (typeof CITIES)[number];
    ips.push({
      type: "IpAllocation",
      name: `ip-${pad(i)}`,
      args: { product: "isp", ...place, replaceTrigger: `t${g.replacement}` },
    });
  }
  return { resources: interleaved(users, keys, ips) };
}

/** One cycle: create, update every user's limits, rotate every key, replace every address and a few objects, destroy. */
export function phases(shape: MixedShape): Phase[] {
  const base: Generation = { limitsBump: 0, rotation: 0, replacement: 0, replaced: false };
  const all = shape.users + shape.keys + shape.ips;
  const replacedObjects = Math.min(2, shape.users) + Math.min(2, shape.keys);
  return [
    { name: "create", spec: spec(shape, base), writes: all },
    { name: "update", spec: spec(shape, { ...base, limitsBump: 1 }), writes: shape.users },
    { name: "rotate", spec: spec(shape, { ...base, limitsBump: 1, rotation: 1 }), writes: shape.keys },
    {
      name: "replace",
      spec: spec(shape, { limitsBump: 1, rotation: 1, replacement: 1, replaced: true }),
      writes: shape.ips + 2 * replacedObjects,
    },
    { name: "destroy", writes: all },
  ];
}
