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

/**
 * 127.0.0.0/8 and ::1, for an address in the URL parser's canonical form (dotted decimal; IPv6
 * compressed, lower case); an IPv4-mapped IPv6 address counts as the IPv4 address it maps.
 */
function isLoopbackAddress(address: string): boolean {
  return isIP(address) === 4 ? address.startsWith("127.") : address === "::1";
}

/** `::ffff:7f00:1` (how a URL spells `::ffff:127.0.0.1`) as the IPv4 address it maps, else as it is. */
function unmapped(address: string): string {
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!mapped) return address;
  const high = Number.parseInt(mapped[1] as string, 16);
  const low = Number.parseInt(mapped[2] as string, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

export interface AbsoluteTarget {
  host: string;
  port: number;
  /** Path and query, sent on to the target in origin form. */
  path: string;
  /** The target's authority, the Host header the request is sent on with. */
  hostHeader: string;
}

/**
 * The one reading of a target's host, for absolute-form requests and CONNECT alike: the WHATWG URL
 * parser's, so every spelling of an address (`127.1`, `0x7f000001`, `2130706433`, `0177.0.0.1`,
 * `[::ffff:127.0.0.1]`) comes out as one canonical address, and a name in lower case.
 */
function hostAndPort(url: URL, port: number): { host: string; port: number } | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "" || !(port >= 1 && port <= 65535)) return undefined;
  return { host, port };
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** A host (a name, an IPv4 address, or `[v6]`: a colon only inside brackets), a colon, and a port. */
const AUTHORITY = /^(\[[^\]\s]*\]|[^\s/?#@\\:[\]]+):(\d{1,5})$/;

/**
 * `host:port` of a CONNECT request, `[v6]:port` included: an authority with its port and nothing else.
 * The port is read from the text, not from the URL parser, which drops a port that is its scheme's
 * default (`:80`) as if none had been given.
 */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = AUTHORITY.exec(authority);
  if (!match) return undefined;
  const url = parseUrl(`http://${match[1]}/`);
  return url ? hostAndPort(url, Number(match[2])) : undefined;
}

/**
 * An absolute-form request target, `http://host[:port]/path`, with the Host header it implies
 * (RFC 9112 §3.2.2: the target's authority, whatever Host the client sent); anything else, port 0
 * included, is not a proxy request.
 */
export function parseAbsoluteUrl(text: string): AbsoluteTarget | undefined {
  if (!/^http:\/\//i.test(text)) return undefined;
  const url = parseUrl(text);
  const target = url && hostAndPort(url, url.port === "" ? 80 : Number(url.port));
  if (!url || !target) return undefined;
  return { host: target.host, port: target.port, path: `${url.pathname}${url.search}`, hostHeader: url.host };
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
      const address = unmapped(host);
      if (isLoopbackAddress(address)) return { host, port, connectTo: address };
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
