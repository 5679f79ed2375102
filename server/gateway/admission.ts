import { timingSafeEqual } from "node:crypto";
import { BYTES_PER_GB } from "../../contract/proxyUsers";
import { type Clock, utcDay, utcMonth } from "../clock";
import type { RateLimiter } from "../rateLimit";
import type { Store } from "../store";
import { sha256Hex } from "../tokens";
import type { GatewayView, PropagatingDirectory } from "./directory";
import type { FailedLogins } from "./logins";
import { Refusal } from "./refusals";

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

const CHALLENGE =
  "Send Proxy-Authorization: Basic base64(username:password) with the proxy user's username and the password returned when it was created.";

/** Compared against when the username is unknown, so that path hashes and compares exactly like a wrong password. */
const NO_USER_HASH = sha256Hex("no such proxy user");

/** Logins remembered at once; past it the oldest gives way. */
const PROVEN_LOGINS = 10_000;

/** What a header proved: whose it is, and the stored hash its password matched. */
interface ProvenLogin {
  readonly username: string;
  /** After a password change (a user made anew under the name) the header is checked in full again. */
  readonly passwordHash: string;
}

/**
 * Where a connection keeps the last header that proved a login on it: a 53-bit fingerprint, never the
 * header. The same header again on that connection needs no SHA-256 at all; a fingerprint can only
 * be matched on the connection that proved it, so it need not resist forgery.
 */
export interface LoginSlot {
  proven?: { readonly fingerprint: number; readonly login: ProvenLogin };
}

export interface AdmissionLimits {
  limiter: RateLimiter;
  failedLogins: FailedLogins;
  /** Exchanges and tunnels one proxy user may have open at once. */
  maxOpenPerUser: number;
  openCount: (userId: string) => number;
}

/**
 * Who may send a new request through the gateway, in this order: failed-login budget (429),
 * credentials, enabled, traffic ceilings (all 407), then the per-user rate limit and open-exchange
 * cap (429). Everything is read at the moment the request arrives; a disable or a deletion never cuts
 * what is already admitted, the ceilings do (see the meter).
 */
export class Admission {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly directory: PropagatingDirectory,
    private readonly limits: AdmissionLimits,
    /** The password hash, the store's own; injectable so a test can see both refusal paths do the same work. */
    private readonly hashPassword: (password: string) => string = sha256Hex,
  ) {}

  /**
   * Headers that proved a login lately, by their SHA-256: neither a password nor a header is kept. A
   * header seen again skips decoding, the password hash and the comparison; only a successful login
   * is remembered, so a flood of wrong ones neither grows nor churns it.
   */
  private readonly proven = new Map<string, ProvenLogin>();

  /**
   * The proxy user the request is metered to; throws a Refusal. `clientAddress` gives the client's
   * address (asked for only when a login fails or failures are being counted: it costs a system call).
   */
  admit(proxyAuthorization: string | undefined, clientAddress: () => string, slot: LoginSlot = {}): GatewayView {
    const now = this.clock.now();
    const user = this.login(proxyAuthorization, clientAddress, now, slot);
    if (!user.enabled) {
      throw new Refusal("proxy_user_disabled", "This proxy user is disabled; re-enable it through the API.");
    }
    this.checkCeilings(user, now);
    const rate = this.limits.limiter.take(user.id, now);
    if (rate.limited) {
      throw new Refusal(
        "rate_limited",
        `This proxy user has sent its ${rate.limit} new requests for this second; retry in ${rate.resetSeconds} s.`,
        rate.resetSeconds,
      );
    }
    if (this.limits.openCount(user.id) >= this.limits.maxOpenPerUser) {
      throw new Refusal(
        "rate_limited",
        `This proxy user has ${this.limits.maxOpenPerUser} requests and tunnels open, its cap; close one and retry.`,
        1,
      );
    }
    return user;
  }

  /**
   * Whose request this is: proven before by this header on this connection (its fingerprint), proven
   * lately on any connection (its SHA-256), or checked in full. Unknown names and wrong passwords take
   * the same path: they were never proven.
   */
  private login(header: string | undefined, clientAddress: () => string, now: number, slot: LoginSlot): GatewayView {
    if (header === undefined) return this.authenticate(undefined, clientAddress, now);
    const mark = fingerprint(header);
    // The connection proved this very login: it stays usable whatever others' failures did to the
    // name's budget (the lockout a stranger could cause), and it learns nothing it did not know.
    if (slot.proven?.fingerprint === mark) {
      const user = this.stillValid(slot.proven.login, now);
      if (user) return user;
    }
    const headerHash = sha256Hex(header);
    const remembered = this.proven.get(headerHash);
    let user = remembered && this.provenAgain(remembered, clientAddress, now);
    if (!user) {
      user = this.authenticate(header, clientAddress, now);
      this.remember(headerHash, { username: user.name, passwordHash: user.passwordHash });
    }
    slot.proven = { fingerprint: mark, login: { username: user.name, passwordHash: user.passwordHash } };
    return user;
  }

  /** The user a login proved on another connection, while its password is unchanged and its budgets allow. */
  private provenAgain(proven: ProvenLogin, clientAddress: () => string, now: number): GatewayView | undefined {
    // The failed-login budget holds here: a guess that happens to match a header proven on another
    // connection must not tell a limited guesser that it is right.
    this.refuseIfBlocked(proven.username, clientAddress, now);
    return this.stillValid(proven, now);
  }

  /** The user a login proved, while its password is unchanged. */
  private stillValid(proven: ProvenLogin, now: number): GatewayView | undefined {
    const user = this.directory.lookup(proven.username, now);
    return user?.passwordHash === proven.passwordHash ? user : undefined;
  }

  private authenticate(header: string | undefined, clientAddress: () => string, now: number): GatewayView {
    const encoded = header === undefined ? undefined : BASIC.exec(header)?.[1];
    const decoded = encoded === undefined ? "" : Buffer.from(encoded, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const username = colon > 0 ? decoded.slice(0, colon) : "";
    this.refuseIfBlocked(username, clientAddress, now);
    if (colon <= 0) {
      this.limits.failedLogins.fail(username, clientAddress(), now);
      throw new Refusal("invalid_credentials", `Missing or malformed credentials. ${CHALLENGE}`);
    }
    const user = this.directory.lookup(username, now);
    // The same hash and the same comparison whether or not the name exists, so neither the answer nor
    // its timing tells which names exist.
    const matches = sameHash(this.hashPassword(decoded.slice(colon + 1)), user?.passwordHash ?? NO_USER_HASH);
    if (!user || !matches) {
      this.limits.failedLogins.fail(username, clientAddress(), now);
      throw new Refusal("invalid_credentials", `Wrong username or password. ${CHALLENGE}`);
    }
    return user;
  }

  private remember(headerHash: string, login: ProvenLogin): void {
    this.proven.delete(headerHash);
    if (this.proven.size >= PROVEN_LOGINS) {
      const oldest = this.proven.keys().next().value;
      if (oldest !== undefined) this.proven.delete(oldest);
    }
    this.proven.set(headerHash, login);
  }

  private refuseIfBlocked(username: string, clientAddress: () => string, now: number): void {
    // The usual case, nothing failed lately: no address to ask for, no keys to build.
    if (this.limits.failedLogins.tracked === 0) return;
    const blockedFor = this.limits.failedLogins.blockedFor(username, clientAddress(), now);
    if (blockedFor !== undefined) {
      throw new Refusal(
        "rate_limited",
        `Too many failed logins for this username, from this address, or for this username from this address; retry in ${blockedFor} s.`,
        blockedFor,
      );
    }
  }

  private checkCeilings(user: GatewayView, now: number): void {
    const { daily_gb: daily, monthly_gb: monthly } = user.limits;
    if (daily !== null && this.store.bytesOnDay(user.id, utcDay(now)) >= daily * BYTES_PER_GB) {
      throw new Refusal(
        "traffic_limit_reached",
        `This proxy user has reached its daily ceiling of ${daily} GB for ${utcDay(now)} (UTC); raise limits.daily_gb or wait for the next UTC day.`,
      );
    }
    if (monthly !== null && this.store.bytesInMonth(user.id, utcMonth(now)) >= monthly * BYTES_PER_GB) {
      throw new Refusal(
        "traffic_limit_reached",
        `This proxy user has reached its monthly ceiling of ${monthly} GB for ${utcMonth(now)} (UTC); raise limits.monthly_gb or wait for the next UTC month.`,
      );
    }
  }
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** 53 bits of two FNV-1a-style lanes over a header: equal headers give equal fingerprints. */
function fingerprint(text: string): number {
  let low = 0x811c9dc5;
  let high = 0x9e3779b9 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    low = Math.imul(low ^ code, 0x01000193);
    high = Math.imul(high ^ code, 0x5bd1e995);
  }
  return (high >>> 11) * 0x1_0000_0000 + (low >>> 0);
}
