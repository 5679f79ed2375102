import * as pulumi from "@pulumi/pulumi";
import { ConnectionError, PermissionDeniedError, type ProxyClient } from "../../sdk";
import { explain } from "./errors";
import { providerSettings } from "./settings";

/**
 * Pulumi records the stack configuration, `proxy:apiKey` included, as the inputs of the stack's
 * provider, in the state: encrypted when the value was set with `--secret`, in plain text otherwise.
 * A plaintext key is therefore refused at preview, before the engine could record it, with the
 * command that encrypts the value in place; the message never shows the value. `PROXY_API_KEY` in the
 * environment is not stack configuration and stays allowed. One rule and one message, seen in two
 * places: the program process for the dynamic resources (below), the plugin for the native provider
 * (`apiKeyIsPlaintextIn`, and the plaintext key an explicit provider would record).
 */
export const PLAINTEXT_API_KEY_FIX = 'pulumi config set --secret proxy:apiKey "$(pulumi config get proxy:apiKey)"';

export const PLAINTEXT_API_KEY_REFUSAL = `proxy:apiKey is stored in plain text in the stack configuration, and Pulumi would also record it in the state. Encrypt it in place: ${PLAINTEXT_API_KEY_FIX}`;

/**
 * The rule as the plugin sees it, from the text of the stack's config file (Pulumi.<stack>.yaml):
 * whether proxy:apiKey is set there other than as `secure:`. The engine tells a plugin nothing about
 * which config values are secret, and once the state holds the key encrypted it hands the plugin a
 * plain one as a secret, so only the file says what the user set.
 */
export function apiKeyIsPlaintextIn(stackConfig: string): boolean {
  const KEY = /^\s+["']?proxy:apiKey["']?:/;
  const lines = stackConfig.split(/\r?\n/);
  const at = lines.findIndex((line) => KEY.test(line));
  if (at === -1) return false;
  const value = (lines[at] ?? "")
    .replace(KEY, "")
    .replace(/\s#.*$/, "")
    .trim();
  if (value !== "") return !/^\{\s*secure\s*:/.test(value);
  const next = lines.slice(at + 1).find((line) => line.trim() !== "" && !line.trim().startsWith("#"));
  return !/^\s+secure\s*:/.test(next ?? "");
}

/** The part of @pulumi/pulumi's runtime (pinned) that its typings leave out: whether a config value is secret. */
type ConfigSecrecy = { isConfigSecret?: unknown };

/**
 * Whether the stack config holds `key` as a secret, from @pulumi/pulumi's runtime. Without that export
 * the refusal cannot tell a plaintext key from an encrypted one; it fails rather than let every key
 * through unchecked.
 */
export function configSecrecy(runtime: object = pulumi.runtime): (key: string) => boolean {
  const isSecret = (runtime as ConfigSecrecy).isConfigSecret;
  if (typeof isSecret !== "function") {
    throw new Error(
      "pulumi-proxy: this @pulumi/pulumi has no runtime.isConfigSecret, which the refusal of a plaintext proxy:apiKey needs; install the @pulumi/pulumi version pulumi-proxy pins.",
    );
  }
  return (key) => isSecret(key) === true;
}

export function refusePlaintextApiKey(): void {
  const isSecret = configSecrecy();
  if (pulumi.runtime.getConfig("proxy:apiKey") === undefined || isSecret("proxy:apiKey")) return;
  throw new pulumi.RunError(PLAINTEXT_API_KEY_REFUSAL);
}

/** A provider setting the provider process would refuse, refused at preview instead, before any request. */
export function refuseBadSettings(): void {
  try {
    providerSettings((key) => pulumi.runtime.getConfig(key));
  } catch (error) {
    throw new pulumi.RunError((error as Error).message);
  }
}

/**
 * Why the stack's credentials cannot work, or undefined; `check` asks it (dynamic and native alike,
 * once the inputs are valid), so a preview fails where the up would, and `pulumi-proxy plan` prints
 * no plan. An `up` also records proxy:apiUrl and proxy:apiKey for every later refresh and destroy, so
 * one pointed at nothing must not deploy "unchanged". It costs one cheap request per run and
 * settings, the run's first, so a closed port fails in seconds (sdk/core/retry.ts). Any answer but a
 * refused key will do: a 403 means the key is valid but lacks proxy-users:read, which the method that
 * needs it reports.
 */
export async function credentialsProblem(client: ProxyClient, apiUrl: string): Promise<string | undefined> {
  try {
    await client.proxyUsers.list({ limit: 1 });
    return undefined;
  } catch (error) {
    if (error instanceof PermissionDeniedError) return undefined;
    const explained = explain("pulumi-proxy", `use the API at ${apiUrl} (proxy:apiUrl)`, error).message;
    // The run's first request: nothing listening there is most likely a wrong URL.
    return error instanceof ConnectionError
      ? `${explained} If the URL is wrong, set another with \`pulumi config set proxy:apiUrl https://…\`.`
      : explained;
  }
}
