/**
 * What serialized providers call in the provider process (see stubs.ts). Loaded lazily there, so the
 * SDK and its HTTP stack never enter the state or the program's closure.
 */
import * as pulumi from "@pulumi/pulumi";
import { contextFor, type ProviderContext } from "./context";
import { credentialsProblem } from "./credentials";
import { type Handler, handlerFor } from "./dynamic";
import { KINDS, type ResourceKind } from "./kinds";
import { type ApiSettings, apiSettings, CONFIG_KEYS, type ConfigKey, settingsIdentity } from "./settings";

/**
 * The stack config the provider process was given. Credentials live only here: `configure`
 * receives the stack config in this process, and the environment is the fallback. Nothing of it is
 * ever captured into the serialized provider.
 */
let fromConfig: Partial<Record<ConfigKey, string>> = {};
let current: { identity: string; context: ProviderContext } | undefined;

export function configure(request: pulumi.dynamic.ConfigureRequest): void {
  fromConfig = Object.fromEntries(CONFIG_KEYS.map((key) => [key, request.config.get(key)]));
}

/** The context for the configured credentials, made on first use (a method that needs no API never fails). */
function context(): ProviderContext {
  const settings = apiSettings((key) => fromConfig[key]);
  const identity = settingsIdentity(settings);
  if (current?.identity !== identity) {
    const warn = (message: string) => void pulumi.log.warn(message);
    current = { identity, context: contextFor(settings, "pulumi-proxy-provider", warn) };
  }
  return current.context;
}

let verified: { identity: string; problem: Promise<string | undefined> } | undefined;

/** Why the configured credentials cannot work (credentials.ts): asked once per process and settings. */
function problemWithCredentials(): Promise<string | undefined> {
  let settings: ApiSettings;
  try {
    settings = apiSettings((key) => fromConfig[key]);
  } catch (error) {
    return Promise.resolve((error as Error).message);
  }
  const identity = settingsIdentity(settings);
  if (verified?.identity !== identity) {
    verified = { identity, problem: credentialsProblem(context().client, settings.apiUrl) };
  }
  return verified.problem;
}

export const handlers = Object.fromEntries(
  KINDS.map((kind) => [kind.kind, handlerFor(kind, context, problemWithCredentials)]),
) as Record<ResourceKind, Handler>;
