/**
 * What serialized providers call in the provider process (see serializedStub.ts). Loaded lazily there, so the
 * SDK and its HTTP stack never enter the state or the program's closure.
 */
import type * as pulumi from "@pulumi/pulumi";
import { providerFront } from "./front";

/**
 * The dynamic front's own state. Credentials live only here: `configure` receives the stack config in
 * this process, and the environment is the fallback. Nothing of it is ever captured into the
 * serialized provider.
 */
const front = providerFront("pulumi-proxy-provider");

export function configure(request: pulumi.dynamic.ConfigureRequest): void {
  front.configure((key) => request.config.get(key));
}

export const handlers = front.handlers;
