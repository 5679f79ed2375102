import * as pulumi from "@pulumi/pulumi";
import { refuseBadSettings, refusePlaintextApiKey } from "../core/credentials";
import { type ArgsOf, type Descriptor, NAME_INPUT, type OutputsOf } from "../core/descriptor";
import { IDENTITY_INPUT, resourceIdentity } from "../core/idempotency";
import type { ResourceKind } from "../kinds";
import { PROVIDER_INPUT, serializedStub } from "./serializedStub";

/**
 * The dynamic-resource front-end over the descriptors: the resource class a Node program declares,
 * whose serialized stub calls the methods of core/handlers.ts in the provider process.
 */

/**
 * The resource class of a descriptor. Its constructor registers every declared output, so
 * `resource.<output>` exists even when the matching input was omitted, overlaid by the args; since
 * state carries every one of them (null where unset), none shows as unknown in a preview.
 *
 * A dynamic resource as `pulumi.dynamic.Resource` registers it (the engine's type
 * `pulumi-nodejs:dynamic/proxy:<Type>`, the provider in `__provider`), with the stub's text written
 * once (serializedStub.ts) instead of serialized in every program run.
 *
 * Exported as it is (`export const ProxyUser = resourceClass(…)`), not subclassed: a subclass adds a
 * constructor frame to the stack trace the engine stores with every resource, and the engine
 * rewrites every resource's state after every step.
 */
type ResourceClass<D extends Descriptor> = new (
  name: string,
  args: ArgsOf<D>,
  opts?: pulumi.CustomResourceOptions,
) => pulumi.CustomResource & OutputsOf<D>;

export function resourceClass<D extends Descriptor & { kind: ResourceKind }>(descriptor: D): ResourceClass<D> {
  const { type, secretOutputs } = descriptor;
  const provider = serializedStub(descriptor.kind);
  const outputs = Object.fromEntries(Object.keys(descriptor.outputs).map((key) => [key, undefined]));
  const resource = class extends pulumi.CustomResource {
    constructor(name: string, args: ArgsOf<D>, opts?: pulumi.CustomResourceOptions) {
      refusePlaintextApiKey();
      refuseBadSettings();
      const additionalSecretOutputs = [...secretOutputs, ...(opts?.additionalSecretOutputs ?? [])];
      // Hidden inputs: who this resource is, for idempotency keys that survive a crash (idempotency.ts),
      // and its name, for errors.
      const identity = {
        [IDENTITY_INPUT]: resourceIdentity(`proxy:${type}`, name, opts?.parent),
        [NAME_INPUT]: name,
      };
      const props = { ...outputs, ...args, ...identity, [PROVIDER_INPUT]: provider };
      super(`pulumi-nodejs:dynamic/proxy:${type}`, name, props, { ...opts, additionalSecretOutputs });
    }
  };
  Object.defineProperty(resource, "name", { value: type });
  // The engine sets each output on the instance (registered above as an undefined property), which
  // the class's own type cannot show: the class is what ResourceClass says, outputs included.
  return resource as unknown as ResourceClass<D>;
}
