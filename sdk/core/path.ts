import { ProxyError } from "./errors";

/**
 * Fills `{name}` segments of a path template with URL-encoded values. Ids come from users and from
 * state files, so an empty id, or one that would walk up the path ("." or ".."), is refused rather
 * than silently turned into a different endpoint (for example a list instead of a get).
 */
export function resolvePath(template: string, params: Record<string, string>): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const value = params[name];
    if (typeof value !== "string") throw new ProxyError(`path parameter ${name} is missing for ${template}`);
    if (value === "" || value === "." || value === "..") {
      throw new ProxyError(`path parameter ${name} must be a non-empty id, got ${JSON.stringify(value)}`);
    }
    return encodeURIComponent(value);
  });
}
