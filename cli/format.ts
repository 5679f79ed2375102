/** How the CLI shows values and types, for the plan and the drift table alike. */

const MAX_VALUE = 48;

/** Compact and single-line; long values are cut, secrets arrive already masked as "[secret]". */
export function formatValue(value: unknown): string {
  if (value === undefined) return "(absent)";
  const text = typeof value === "string" && value === "[secret]" ? value : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/** `pulumi-nodejs:dynamic/proxy:ProxyUser` reads better as `proxy:ProxyUser`. */
export function shortType(type: string): string {
  return type.replace(/^pulumi-nodejs:(dynamic\/)?/, "");
}
