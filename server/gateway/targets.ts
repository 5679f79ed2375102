import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Refusal } from "./refusals";

export interface Target {
  /** As the client named it, without IPv6 brackets. */
  host: string;
  port: number;
  /** What the gateway connects to: a checked loopback address, or an allowed host's name. */
  connectTo: string;
}

function isLoopbackAddress(address: string): boolean {
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith("127.");
  return address === "::1" || address === "0:0:0:0:0:0:0:1";
}

/** `host:port` of a CONNECT request, `[v6]:port` included. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/\s]+)):(\d{1,5})$/.exec(authority);
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  if (host === undefined || !(port >= 1 && port <= 65535)) return undefined;
  return { host, port };
}

/** An absolute-form request target, `http://host[:port]/path`; anything else is not a proxy request. */
export function parseAbsoluteUrl(url: string): { host: string; port: number; path: string } | undefined {
  if (!/^http:\/\//i.test(url)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  return { host, port: parsed.port === "" ? 80 : Number(parsed.port), path: `${parsed.pathname}${parsed.search}` };
}

/**
 * Loopback only, unless the operator named more hosts: the emulator must never be an open proxy. A
 * name is resolved once and the checked address is what the gateway connects to, so a name cannot
 * pass the check and then resolve elsewhere.
 */
export class TargetPolicy {
  private readonly allowed: Set<string>;

  constructor(allowedHosts: readonly string[] = []) {
    this.allowed = new Set(allowedHosts.map((host) => host.toLowerCase()));
  }

  async check(host: string, port: number): Promise<Target> {
    const name = host.toLowerCase();
    if (this.allowed.has(name)) return { host, port, connectTo: host };
    if (isIP(host) !== 0) {
      if (isLoopbackAddress(host)) return { host, port, connectTo: host };
      throw notAllowed();
    }
    // A name is allowed when it resolves, and only to loopback (`localhost`, typically).
    const addresses = await lookup(host, { all: true }).catch(() => []);
    const first = addresses[0];
    if (first === undefined || !addresses.every((entry) => isLoopbackAddress(entry.address))) throw notAllowed();
    return { host, port, connectTo: first.address };
  }
}

function notAllowed(): Refusal {
  return new Refusal(
    "target_not_allowed",
    "The reference gateway forwards only to loopback targets (127.0.0.0/8, ::1) and to hosts the operator allowed with --gateway-allow-host.",
  );
}
