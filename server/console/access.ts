import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

/** The console's own cookie: the page never sees it (HttpOnly), and the API never reads it. */
export const CONSOLE_COOKIE = "proxy_console";

export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const plain = address.startsWith("::ffff:") ? address.slice(7) : address;
  return plain === "::1" || (isIP(plain) === 4 && plain.startsWith("127."));
}

/** A whole Host header: `[IPv6]` or a name, then at most a port. Nothing may follow, not even after `]`. */
const HOST_HEADER = /^(?:\[([0-9A-Fa-f:.]+)\]|([^[\]:@/\\?#\s]+))(?::\d{1,5})?$/;

/** The Host a browser sent names this machine: a page on another site's name (DNS rebinding) is refused. */
export function isLoopbackHost(host: string | undefined): boolean {
  const match = HOST_HEADER.exec(host ?? "");
  if (!match) return false;
  const [, bracketed, name] = match;
  if (bracketed !== undefined) return isIP(bracketed) === 6 && isLoopbackAddress(bracketed);
  return name?.toLowerCase() === "localhost" || isLoopbackAddress(name);
}

/**
 * A token that only opens the console: made at start, handed to the page as an HttpOnly cookie when
 * it is loaded from this machine, and accepted only from this machine. It is not an API key and the
 * API's routes never look at it.
 */
export class ConsoleAccess {
  readonly #token = Buffer.from(randomBytes(24).toString("base64url"));

  /** Why the request may not see the console, or undefined when it may. */
  refusal(req: IncomingMessage, needsToken: boolean): string | undefined {
    if (!isLoopbackAddress(req.socket.remoteAddress)) return "the console answers this machine only";
    if (!isLoopbackHost(req.headers.host)) return "the console answers only to a loopback host name";
    if (needsToken && !this.matches(cookie(req.headers.cookie, CONSOLE_COOKIE))) {
      return "no console token: open the console's page first";
    }
    return undefined;
  }

  /** The Set-Cookie that hands the page its token without letting its scripts read it. */
  cookie(): string {
    return `${CONSOLE_COOKIE}=${this.#token.toString()}; HttpOnly; SameSite=Strict; Path=/console`;
  }

  private matches(value: string | undefined): boolean {
    if (value === undefined) return false;
    const given = Buffer.from(value);
    return given.length === this.#token.length && timingSafeEqual(given, this.#token);
  }
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}
