import type * as pulumi from "@pulumi/pulumi";
import type { ResourceKind } from "./kinds";

/**
 * The provider object the engine serializes into the state of every resource. It holds no logic and
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
