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

/**
 * What a connection's last full login proved. Neither the password nor the header is kept, only a
 * fingerprint of the header: the same header again on the same connection skips the password hash
 * (the one costly step of a login), any other header is checked in full.
 */
export interface ProvenLogin {
  readonly fingerprint: number;
  readonly username: string;
  /** The stored hash the password matched: after a password change the next request is checked in full. */
  readonly passwordHash: string;
}

/** Where a connection keeps its proven login. */
export interface LoginSlot {
  login: ProvenLogin | undefined;
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
   * The proxy user the request is metered to; throws a Refusal. `address` is the client's, `slot` its
   * connection's proven login.
   */
  admit(proxyAuthorization: string | undefined, address: string, slot: LoginSlot = { login: undefined }): GatewayView {
    const now = this.clock.now();
    const user =
      this.provenAgain(proxyAuthorization, address, now, slot.login) ??
      this.authenticate(proxyAuthorization, address, now, slot);
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

  /** The connection's proven user, when this is the header that proved it and the password is unchanged. */
  private provenAgain(
    header: string | undefined,
    address: string,
    now: number,
    proven: ProvenLogin | undefined,
  ): GatewayView | undefined {
    if (proven === undefined || header === undefined || fingerprint(header) !== proven.fingerprint) return undefined;
    // The failed-login budget holds here too: a limited name is refused whatever the password.
    this.refuseIfBlocked(proven.username, address, now);
    const user = this.directory.lookup(proven.username, now);
    return user?.passwordHash === proven.passwordHash ? user : undefined;
  }

  private authenticate(header: string | undefined, address: string, now: number, slot: LoginSlot): GatewayView {
    const encoded = header === undefined ? undefined : BASIC.exec(header)?.[1];
    const decoded = encoded === undefined ? "" : Buffer.from(encoded, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const username = colon > 0 ? decoded.slice(0, colon) : "";
    this.refuseIfBlocked(username, address, now);
    if (colon <= 0) {
      this.limits.failedLogins.fail(username, address, now);
      throw new Refusal("invalid_credentials", `Missing or malformed credentials. ${CHALLENGE}`);
    }
    const user = this.directory.lookup(username, now);
    // The same hash and the same comparison whether or not the name exists, so neither the answer nor
    // its timing tells which names exist.
    const matches = sameHash(this.hashPassword(decoded.slice(colon + 1)), user?.passwordHash ?? NO_USER_HASH);
    if (!user || !matches) {
      this.limits.failedLogins.fail(username, address, now);
      throw new Refusal("invalid_credentials", `Wrong username or password. ${CHALLENGE}`);
    }
    slot.login = { fingerprint: fingerprint(header as string), username, passwordHash: user.passwordHash };
    return user;
  }

  private refuseIfBlocked(username: string, address: string, now: number): void {
    const blockedFor = this.limits.failedLogins.blockedFor(username, address, now);
    if (blockedFor !== undefined) {
      throw new Refusal(
        "rate_limited",
        `Too many failed logins for this username or from this address; retry in ${blockedFor} s.`,
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

/** 53 bits of two FNV-1a-style lanes over a header: equal headers give equal fingerprints, and the header itself need not be kept. */
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
