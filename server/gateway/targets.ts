import type { LookupAddress, LookupOptions } from "node:dns";
import { isIP } from "node:net";
import { Refusal } from "./refusals";

export interface Target {
  /** As the client named it, without IPv6 brackets. */
  host: string;
  port: number;
  /** What the gateway connects to: a checked loopback address, `localhost`, or an allowed host's name. */
  connectTo: string;
  /** For `localhost`: its loopback addresses, without asking any resolver. */
  lookup?: typeof loopbackLookup;
}

const LOOPBACK: LookupAddress[] = [
  { address: "127.0.0.1", family: 4 },
  { address: "::1", family: 6 },
];

/** `localhost` is loopback by definition (RFC 6761 §6.3): answered here, never by a resolver. */
export function loopbackLookup(
  _host: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  if (options.all) callback(null, LOOPBACK);
  else if (options.family === 6) callback(null, "::1", 6);
  else callback(null, "127.0.0.1", 4);
}

function isLoopbackAddress(address: string): boolean {
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith("127.");
  return address === "::1" || address === "0:0:0:0:0:0:0:1";
}

export interface AbsoluteTarget {
  host: string;
  port: number;
  /** Path and query, sent on to the target in origin form. */
  path: string;
  /** The target's authority, the Host header the request is sent on with. */
  hostHeader: string;
}

/** `host:port` of a CONNECT request, `[v6]:port` included. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/\s]+)):(\d{1,5})$/.exec(authority);
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  if (host === undefined || !(port >= 1 && port <= 65535)) return undefined;
  return { host, port };
}

/**
 * An absolute-form request target, `http://host[:port]/path`, with the Host header it implies
 * (RFC 9112 §3.2.2: the target's authority, whatever Host the client sent); anything else, port 0
 * included, is not a proxy request.
 */
export function parseAbsoluteUrl(url: string): AbsoluteTarget | undefined {
  if (!/^http:\/\//i.test(url)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = parsed.port === "" ? 80 : Number(parsed.port);
  if (host === "" || !(port >= 1 && port <= 65535)) return undefined;
  return { host, port, path: `${parsed.pathname}${parsed.search}`, hostHeader: parsed.host };
}

/**
 * Loopback only, unless the operator named more hosts: the emulator must never be an open proxy.
 * Nothing is resolved to decide: an IP literal must be loopback, `localhost` is answered without a
 * resolver, an allowed name is connected to by name, and every other name is refused as it stands,
 * so a name a client sends never leaves the machine as a DNS query.
 */
export class TargetPolicy {
  private readonly allowed: Set<string>;

  constructor(allowedHosts: readonly string[] = []) {
    this.allowed = new Set(allowedHosts.map((host) => host.toLowerCase()));
  }

  check(host: string, port: number): Target {
    const name = host.toLowerCase().replace(/\.$/, "");
    if (this.allowed.has(name)) return { host, port, connectTo: host };
    if (isIP(host) !== 0) {
      if (isLoopbackAddress(host)) return { host, port, connectTo: host };
      throw notAllowed();
    }
    if (name === "localhost") return { host, port, connectTo: "localhost", lookup: loopbackLookup };
    throw notAllowed();
  }
}

function notAllowed(): Refusal {
  return new Refusal(
    "target_not_allowed",
    "The reference gateway forwards only to loopback targets (127.0.0.0/8, ::1) and to hosts the operator allowed with --gateway-allow-host.",
  );
}
