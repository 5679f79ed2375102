import * as pulumi from "@pulumi/pulumi";
import type { PulumiFn } from "@pulumi/pulumi/automation";
import type { Installed } from "./install";
import type { Recorded } from "./replay";

/**
 * The stacks the benchmarks deploy, each in three builds: the real resources; the same resources
 * (names, types, inputs) behind a provider that does nothing, which measures what the engine itself
 * costs, the floor no provider can go below; and the same again behind a provider that replays the
 * state a real run left (replay.ts), which adds what checkpointing the real outputs costs the engine.
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

/**
 * The real stack, on the dynamic resources or, with `native`, the same names and inputs through the
 * generated SDK, so the engine talks to the `proxy` plugin instead of a dynamic-provider process.
 * Exports only a count, so outputs do not dominate the state being measured.
 */
export function realProgram(installed: Installed, shape: StackShape, native = false): PulumiFn {
  const { ApiKey, IpAllocation, ProxyUser } = native ? installed.native : installed.provider;
  return async () => {
    for (let i = 0; i < shape.users; i++) new ProxyUser(`user-${pad(i)}`, userArgs(i));
    for (let i = 0; i < shape.keys; i++) new ApiKey(`key-${pad(i)}`, keyArgs(i));
    for (let i = 0; i < shape.ips; i++) new IpAllocation(`ip-${pad(i)}`, ipArgs(i));
    return { resources: resourceCount(shape) };
  };
}

/** The twins' resources: the real classes' type tokens, with a provider of the twin's own. */
class Twin extends pulumi.dynamic.Resource {
  constructor(
    provider: pulumi.dynamic.ResourceProvider,
    name: string,
    type: string,
    args: Record<string, unknown>,
    options: pulumi.CustomResourceOptions = {},
  ) {
    super(provider, name, args, options, "proxy", type);
  }
}

/** What a twin adds to a resource's inputs and options, by resource name. */
type Extra = (name: string) => { inputs?: Record<string, unknown>; options?: pulumi.CustomResourceOptions };

/**
 * The real stack's names, types and inputs behind `provider`. Each resource is constructed right here,
 * as the real program constructs its own, so both record stack traces of the same depth in the state.
 */
function twinProgram(
  shape: StackShape,
  provider: pulumi.dynamic.ResourceProvider,
  extra: Extra = () => ({}),
): PulumiFn {
  const args = (name: string, own: Record<string, unknown>) => ({ ...own, ...extra(name).inputs });
  const options = (name: string) => extra(name).options ?? {};
  return async () => {
    for (let i = 0; i < shape.users; i++) {
      const name = `user-${pad(i)}`;
      new Twin(provider, name, "ProxyUser", args(name, userArgs(i)), options(name));
    }
    for (let i = 0; i < shape.keys; i++) {
      const name = `key-${pad(i)}`;
      new Twin(provider, name, "ApiKey", args(name, keyArgs(i)), options(name));
    }
    for (let i = 0; i < shape.ips; i++) {
      const name = `ip-${pad(i)}`;
      new Twin(provider, name, "IpAllocation", args(name, ipArgs(i)), options(name));
    }
    return { resources: resourceCount(shape) };
  };
}

export function noopProgram(installed: Installed, shape: StackShape): PulumiFn {
  return twinProgram(shape, installed.noopProvider);
}

/** The same-state twin (replay.ts): each resource passes the identity and marks the secrets a real run recorded. */
export function replayProgram(installed: Installed, shape: StackShape, recorded: Recorded): PulumiFn {
  return twinProgram(shape, installed.replayProvider, (name) => {
    const real = recorded[name];
    if (!real) throw new Error(`no real run recorded ${name}`);
    return { inputs: { __identity: real.inputs.__identity }, options: { additionalSecretOutputs: real.secrets } };
  });
}
