import * as pulumi from "@pulumi/pulumi";
import type { PulumiFn } from "@pulumi/pulumi/automation";
import type { Installed } from "./install";

/**
 * The stacks the benchmarks deploy, each in two builds: the real resources, and the same resources
 * (names, types, inputs) behind a provider that does nothing. The second measures what the engine
 * itself costs: the floor no provider can go below.
 */

export interface StackShape {
  label: string;
  users: number;
  keys: number;
  ips: number;
}

export function resourceCount(shape: StackShape): number {
  return shape.users + shape.keys + shape.ips;
}

/** Places with room for the mixed stack's allocations (the reference pool has 120 addresses in each). */
const CITIES = [
  { country: "us", city: "new york" },
  { country: "de", city: "berlin" },
  { country: "gb", city: "london" },
  { country: "jp", city: "tokyo" },
] as const;

const pad = (i: number) => String(i).padStart(3, "0");

function userArgs(i: number) {
  return { name: `bench-user-${pad(i)}`, limits: { dailyGb: 1 + (i % 5), monthlyGb: 100 }, enabled: true };
}

function keyArgs(i: number) {
  return { name: `bench-key-${pad(i)}`, scopes: ["usage:read" as const] };
}

function ipArgs(i: number) {
  const place = CITIES[i % CITIES.length]!;
  return { product: "isp" as const, country: place.country, city: place.city };
}

/** The real stack. Exports only a count, so outputs do not dominate the state being measured. */
export function realProgram(installed: Installed, shape: StackShape): PulumiFn {
  const { ApiKey, IpAllocation, ProxyUser } = installed.provider;
  return async () => {
    for (let i = 0; i < shape.users; i++) new ProxyUser(`user-${pad(i)}`, userArgs(i));
    for (let i = 0; i < shape.keys; i++) new ApiKey(`key-${pad(i)}`, keyArgs(i));
    for (let i = 0; i < shape.ips; i++) new IpAllocation(`ip-${pad(i)}`, ipArgs(i));
    return { resources: resourceCount(shape) };
  };
}

export function noopProgram(installed: Installed, shape: StackShape): PulumiFn {
  class Noop extends pulumi.dynamic.Resource {
    constructor(name: string, type: string, args: Record<string, unknown>) {
      super(installed.noopProvider, name, args, {}, "proxy", type);
    }
  }
  return async () => {
    for (let i = 0; i < shape.users; i++) new Noop(`user-${pad(i)}`, "ProxyUser", userArgs(i));
    for (let i = 0; i < shape.keys; i++) new Noop(`key-${pad(i)}`, "ApiKey", keyArgs(i));
    for (let i = 0; i < shape.ips; i++) new Noop(`ip-${pad(i)}`, "IpAllocation", ipArgs(i));
    return { resources: resourceCount(shape) };
  };
}
