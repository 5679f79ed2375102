import { RETRY_WINDOW_MS_DEFAULT } from "../sdk/core/retry";

/**
 * The provider's tuning in stack config. Read by one function in both processes: the program's, where
 * the resource constructors refuse a bad value at preview, and the provider's, which uses the values.
 */
export interface ProviderSettings {
  /** `proxy:rateLimitReserve`: requests per window left to other users of the key. */
  rateLimitReserve: number;
  /** `proxy:retryWindowSeconds`: how long a request the API did not answer is tried again. */
  retryWindowSeconds: number;
}

export const SETTING_KEYS = ["proxy:rateLimitReserve", "proxy:retryWindowSeconds"] as const;

export function providerSettings(config: (key: (typeof SETTING_KEYS)[number]) => string | undefined): ProviderSettings {
  return {
    rateLimitReserve: wholeNumber("rateLimitReserve", config("proxy:rateLimitReserve"), {
      unit: "requests per minute",
      fallback: 0,
      example: 60,
    }),
    retryWindowSeconds: wholeNumber("retryWindowSeconds", config("proxy:retryWindowSeconds"), {
      unit: "seconds",
      fallback: RETRY_WINDOW_MS_DEFAULT / 1000,
      example: 30,
    }),
  };
}

/** A whole-number setting, 0 or more; a bad value names the setting and the command that sets it. */
function wholeNumber(
  setting: string,
  value: string | undefined,
  { unit, fallback, example }: { unit: string; fallback: number; example: number },
): number {
  if (value === undefined || value.trim() === "") return fallback;
  if (!/^\d+$/.test(value.trim())) {
    throw new Error(
      `pulumi-proxy: proxy:${setting} must be a whole number of ${unit} (0 or more), got ${JSON.stringify(value)}. Run \`pulumi config set proxy:${setting} ${example}\` or remove it.`,
    );
  }
  return Number(value.trim());
}
