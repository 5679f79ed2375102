import * as pulumi from "@pulumi/pulumi";
import type { ProxyClient } from "../sdk";
import { contextFor, type ProviderContext } from "./core/context";
import { credentialsProblem } from "./core/credentials";
import { type Handler, handlerFor } from "./core/handlers";
import {
  type ApiSettings,
  apiSettings,
  CONFIG_KEYS,
  type ConfigKey,
  type ConfigLookup,
  settingsIdentity,
} from "./core/settings";
import { type Account, accountOf } from "./functions/descriptor";
import { KINDS, type ResourceKind } from "./kinds";

/**
 * What one provider process holds: the stack config it was configured with, one context (client,
 * coalesced reads) per settings, and the kinds' handlers over them. Each front (the dynamic provider's
 * runtime, the native plugin) makes its own: the config is a plain lookup by full key, read once.
 */
export interface ProviderFront {
  configure(config: ConfigLookup): void;
  handlers: Record<ResourceKind, Handler>;
  /** The configured client, and the account it reads, for the functions; throws when a credential is missing. */
  session(): { client: ProxyClient; account: Account };
}

export function providerFront(userAgent: string): ProviderFront {
  let fromConfig: Partial<Record<ConfigKey, string>> = {};
  let current: { identity: string; context: ProviderContext } | undefined;
  let verified: { identity: string; problem: Promise<string | undefined> } | undefined;

  const settings = (): ApiSettings => apiSettings((key) => fromConfig[key]);

  /** The context for the configured credentials, made on first use (a method that needs no API never fails). */
  function context(): ProviderContext {
    const configured = settings();
    const identity = settingsIdentity(configured);
    if (current?.identity !== identity) {
      const warn = (message: string) => void pulumi.log.warn(message);
      current = { identity, context: contextFor(configured, userAgent, warn) };
    }
    return current.context;
  }

  /** Why the configured credentials cannot work (credentials.ts): asked once per process and settings. */
  function problemWithCredentials(): Promise<string | undefined> {
    let configured: ApiSettings;
    try {
      configured = settings();
    } catch (error) {
      return Promise.resolve((error as Error).message);
    }
    const identity = settingsIdentity(configured);
    if (verified?.identity !== identity) {
      verified = { identity, problem: credentialsProblem(context().client, configured.apiUrl) };
    }
    return verified.problem;
  }

  return {
    configure(config) {
      fromConfig = Object.fromEntries(CONFIG_KEYS.map((key) => [key, config(key)]));
    },
    handlers: Object.fromEntries(
      KINDS.map((kind) => [kind.kind, handlerFor(kind, context, problemWithCredentials)]),
    ) as Record<ResourceKind, Handler>,
    session: () => ({ client: context().client, account: accountOf(settings()) }),
  };
}
