import type * as pulumi from "@pulumi/pulumi";
import type { ResourceKind } from "../kinds";

/**
 * The provider object that the text in every resource's state loads (serializedStub). It holds no logic and
 * captures nothing but its kind: each method loads `pulumi-proxy/runtime` in the provider process and
 * forwards. State therefore stays small, carries no credential, and always runs the installed
 * package's code. That makes `require("pulumi-proxy/runtime").handlers[kind][method](...)` a contract
 * with every state file ever written: keep its names and arguments stable.
 */
export function stubsFor(kind: ResourceKind): pulumi.dynamic.ResourceProvider {
  const rt = () => require("pulumi-proxy/runtime");
  return {
    configure: (req) => rt().configure(req),
    check: (olds, news) => rt().handlers[kind].check(olds, news),
    diff: (id, olds, news) => rt().handlers[kind].diff(id, olds, news),
    create: (inputs) => rt().handlers[kind].create(inputs),
    read: (id, props) => rt().handlers[kind].read(id, props),
    update: (id, olds, news) => rt().handlers[kind].update(id, olds, news),
    delete: (id, props) => rt().handlers[kind].delete(id, props),
  };
}

/** The input where the engine's dynamic-provider process finds a resource's provider text. */
export const PROVIDER_INPUT = "__provider";

/**
 * The provider text stored in state as `__provider`, which the engine's dynamic-provider process
 * evaluates to find the stub of `kind`. It is byte for byte what @pulumi/pulumi's closure serializer
 * wrote for the stub module (test/provider/serializedStub.test.ts holds a state's copy), so states
 * written by earlier releases see no change. Written here rather than serialized: the serializer
 * loads the TypeScript compiler and walks the stub's closure through the inspector, about 0.4 s of
 * CPU in every run of a JavaScript program, and it stores the whole closure instead of a `require`
 * whenever the package is installed outside a node_modules folder (a link, a workspace).
 */
export function serializedStub(kind: ResourceKind): string {
  return [
    "exports.handler = __f0;",
    `const provider = require("pulumi-proxy/dist/provider/stubs/${kind}.js");`,
    "",
    "function __f0() {",
    "  return (function() {",
    "    with({ this: undefined, arguments: undefined }) {",
    "",
    "return () => provider;",
    "",
    "    }",
    "  }).apply(undefined, undefined).apply(this, arguments);",
    "}",
    "",
  ].join("\n");
}
