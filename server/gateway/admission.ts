import { timingSafeEqual } from "node:crypto";
import type { SecretHasher } from "../auth";
import { type Clock, utcDay, utcMonth } from "../clock";
import type { RateLimiter } from "../rateLimit";
import type { Store } from "../store";
import type { GatewayView, PropagatingDirectory } from "./directory";
import { Refusal } from "./refusals";

/** A GB, as the limits count it. */
export const BYTES_PER_GB = 1e9;

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

const CHALLENGE =
  "Send Proxy-Authorization: Basic base64(username:password) with the proxy user's username and the password returned when it was created.";

/**
 * Who may send a new request through the gateway, in this order: credentials, enabled, traffic
 * ceilings (all 407), then the per-user rate limit (429). Everything is read at the moment the request
 * arrives; a request already admitted is never re-judged.
 */
export class Admission {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly directory: PropagatingDirectory,
    readonly limiter: RateLimiter,
    private readonly hasher: SecretHasher,
  ) {}

  /** The proxy user the request is metered to; throws a Refusal. */
  admit(proxyAuthorization: string | undefined): GatewayView {
    const now = this.clock.now();
    const user = this.authenticate(proxyAuthorization, now);
    if (!user.enabled) {
      throw new Refusal("proxy_user_disabled", "This proxy user is disabled; re-enable it through the API.");
    }
    this.checkCeilings(user, now);
    const rate = this.limiter.take(user.id, now);
    if (rate.limited) {
      throw new Refusal(
        "rate_limited",
        `This proxy user has sent its ${rate.limit} new requests for this second; retry in ${rate.resetSeconds} s.`,
        rate.resetSeconds,
      );
    }
    return user;
  }

  private authenticate(header: string | undefined, now: number): GatewayView {
    const encoded = header === undefined ? undefined : BASIC.exec(header)?.[1];
    if (encoded === undefined)
      throw new Refusal("invalid_credentials", `Missing or malformed credentials. ${CHALLENGE}`);
    const decoded = Buffer.from(encoded, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon <= 0) throw new Refusal("invalid_credentials", `Malformed credentials. ${CHALLENGE}`);
    const user = this.directory.lookup(decoded.slice(0, colon), now);
    // An unknown user and a wrong password get the same answer, so the gateway does not reveal which names exist.
    if (!user || !sameHash(this.hasher.hash(decoded.slice(colon + 1)), user.passwordHash)) {
      throw new Refusal("invalid_credentials", `Wrong username or password. ${CHALLENGE}`);
    }
    return user;
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
