import { ProxyClient } from "../../sdk";
import { RETRY_WINDOW_MS_DEFAULT } from "../../sdk/core/retry";
import { ATTEMPT_TIMEOUT_MS_DEFAULT } from "../../sdk/core/wire";

/**
 * The one way from a stack's settings to an API client, for the provider process (dynamic and
 * native), the program's own reads and the CLI: each reads the stack config its own way and hands
 * this module a lookup by full key (`proxy:apiUrl`). The environment is the fallback for the
 * credentials, as documented.
 */
export const CREDENTIAL_KEYS = ["proxy:apiUrl", "proxy:apiKey"] as const;
export const SETTING_KEYS = [
  "proxy:rateLimitReserve",
  "proxy:retryWindowSeconds",
  "proxy:requestTimeoutSeconds",
] as const;
export const CONFIG_KEYS = [...CREDENTIAL_KEYS, ...SETTING_KEYS] as const;
type SettingKey = (typeof SETTING_KEYS)[number];
/**
 * What each setting is when the stack sets none: the provider's fallback, and its description's
 * words. Not the schema's `default`: Python's generated getter would read it as `… or 120`, turning
 * an explicit 0 into the default.
 */
const SETTING_DEFAULTS: Record<SettingKey, number> = {
  "proxy:rateLimitReserve": 0,
  "proxy:retryWindowSeconds": RETRY_WINDOW_MS_DEFAULT / 1000,
  "proxy:requestTimeoutSeconds": ATTEMPT_TIMEOUT_MS_DEFAULT / 1000,
};
/** The environment variable each credential falls back to when the stack sets none. */
export const CREDENTIAL_ENV = { "proxy:apiUrl": "PROXY_API_URL", "proxy:apiKey": "PROXY_API_KEY" } as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

/** What each key sets, for the schema: the registry page and every generated SDK's config module. */
export const CONFIG_DESCRIPTIONS: Record<ConfigKey, string> = {
  "proxy:apiUrl": "The management API's base URL, with its scheme (https://api.example.com).",
  "proxy:apiKey": "The API key (live_…) the provider acts with; set it with `pulumi config set --secret`.",
  "proxy:rateLimitReserve": `Requests per minute left to other users of the same key (default ${SETTING_DEFAULTS["proxy:rateLimitReserve"]}).`,
  "proxy:retryWindowSeconds": `How long a request the API did not answer is tried again, in seconds (default ${SETTING_DEFAULTS["proxy:retryWindowSeconds"]}).`,
  "proxy:requestTimeoutSeconds": `How long one request waits for an answer before it is tried again, in seconds (1 or more, default ${SETTING_DEFAULTS["proxy:requestTimeoutSeconds"]}).`,
};

export type ConfigLookup = (key: ConfigKey) => string | undefined;

/** The provider's tuning in stack config. */
export interface ProviderSettings {
  /** `proxy:rateLimitReserve`: requests per window left to other users of the key. */
  rateLimitReserve: number;
  /** `proxy:retryWindowSeconds`: how long a request the API did not answer is tried again. */
  retryWindowSeconds: number;
  /** `proxy:requestTimeoutSeconds`: how long one request waits for an answer before it is tried again. */
  requestTimeoutSeconds: number;
}

export interface ApiSettings extends ProviderSettings {
  apiUrl: string;
  apiKey: string;
  /** Where the key came from, for the error a refused key gets (never the key itself). */
  apiKeyFrom: "config" | "environment";
}

/** The tuning alone: the program checks it at preview, before any credential is needed. */
export function providerSettings(config: ConfigLookup): ProviderSettings {
  return {
    rateLimitReserve: wholeNumber("rateLimitReserve", config("proxy:rateLimitReserve"), {
      unit: "requests per minute",
      fallback: SETTING_DEFAULTS["proxy:rateLimitReserve"],
      example: 60,
    }),
    retryWindowSeconds: wholeNumber("retryWindowSeconds", config("proxy:retryWindowSeconds"), {
      unit: "seconds",
      fallback: SETTING_DEFAULTS["proxy:retryWindowSeconds"],
      example: 30,
    }),
    requestTimeoutSeconds: wholeNumber("requestTimeoutSeconds", config("proxy:requestTimeoutSeconds"), {
      unit: "seconds",
      fallback: SETTING_DEFAULTS["proxy:requestTimeoutSeconds"],
      example: 60,
      minimum: 1,
    }),
  };
}

/** Every setting a client needs; a missing or malformed credential names the command that sets it. */
export function apiSettings(config: ConfigLookup): ApiSettings {
  const configuredUrl = config("proxy:apiUrl");
  const apiUrl = configuredUrl || process.env[CREDENTIAL_ENV["proxy:apiUrl"]];
  const configuredKey = config("proxy:apiKey");
  const apiKey = configuredKey || process.env[CREDENTIAL_ENV["proxy:apiKey"]];
  if (!apiUrl) {
    throw new Error(
      "pulumi-proxy: no API URL is configured. Run `pulumi config set proxy:apiUrl https://…` or set PROXY_API_URL.",
    );
  }
  checkUrlForm(apiUrl, configuredUrl ? "proxy:apiUrl" : "PROXY_API_URL");
  if (!apiKey) {
    throw new Error(
      "pulumi-proxy: no API key is configured. Run `pulumi config set --secret proxy:apiKey live_…` or set PROXY_API_KEY.",
    );
  }
  return { apiUrl, apiKey, apiKeyFrom: configuredKey ? "config" : "environment", ...providerSettings(config) };
}

/**
 * `127.0.0.1:8787` parses as a URL whose scheme is `127.0.0.1:`, so the scheme is checked by name:
 * the message shows the value with the scheme it most likely lacks.
 */
function checkUrlForm(apiUrl: string, setting: "proxy:apiUrl" | "PROXY_API_URL"): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(apiUrl).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol === "http:" || protocol === "https:") return;
  const loopback = /^(localhost|127\.|\[::1\])/.test(apiUrl);
  const suggested = `${loopback ? "http" : "https"}://${apiUrl.replace(/^[a-z]*:?\/+/i, "")}`;
  const fix =
    setting === "proxy:apiUrl"
      ? `Run \`pulumi config set proxy:apiUrl ${suggested}\``
      : `Set PROXY_API_URL=${suggested}`;
  throw new Error(
    `pulumi-proxy: ${setting} must be a URL with its scheme, such as https://api.example.com or http://127.0.0.1:8787, got ${JSON.stringify(apiUrl)}. ${fix}.`,
  );
}

/** What a refused key's error adds: where the key came from and how to set another. */
export function refusedKeyHint(from: ApiSettings["apiKeyFrom"]): string {
  const set = "`pulumi config set --secret proxy:apiKey <key>`";
  return from === "config"
    ? `The key is the stack's proxy:apiKey; set one the API accepts with ${set}.`
    : `The key is PROXY_API_KEY from the environment (the stack sets no proxy:apiKey); set one the API accepts there, or for the stack with ${set}.`;
}

/** Two settings that make the same client: a process keeps one client per identity, so pacing sees every request. */
export function settingsIdentity(settings: ApiSettings): string {
  const { apiUrl, apiKey, rateLimitReserve, retryWindowSeconds, requestTimeoutSeconds } = settings;
  return [apiUrl, apiKey, rateLimitReserve, retryWindowSeconds, requestTimeoutSeconds].join("\u0000");
}

export function clientFor(settings: ApiSettings, userAgent: string, onWriteDone?: () => void): ProxyClient {
  return new ProxyClient({
    baseUrl: settings.apiUrl,
    apiKey: settings.apiKey,
    userAgent,
    rateLimitReserve: settings.rateLimitReserve,
    retryWindowMs: settings.retryWindowSeconds * 1000,
    timeoutMs: settings.requestTimeoutSeconds * 1000,
    refusedKeyHint: refusedKeyHint(settings.apiKeyFrom),
    ...(onWriteDone ? { onWriteDone } : {}),
  });
}

/** A whole-number setting, `minimum` (0) or more; a bad value names the setting and the command that sets it. */
function wholeNumber(
  setting: string,
  value: string | undefined,
  { unit, fallback, example, minimum = 0 }: { unit: string; fallback: number; example: number; minimum?: number },
): number {
  if (value === undefined || value.trim() === "") return fallback;
  if (!/^\d+$/.test(value.trim()) || Number(value.trim()) < minimum) {
    throw new Error(
      `pulumi-proxy: proxy:${setting} must be a whole number of ${unit} (${minimum} or more), got ${JSON.stringify(value)}. Run \`pulumi config set proxy:${setting} ${example}\` or remove it.`,
    );
  }
  return Number(value.trim());
}
