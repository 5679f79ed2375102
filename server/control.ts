import { toWireIssues } from "../contract/common";
import { IpHealth, IpPathSegment } from "../contract/ips";
import { CreateApiKeyBody } from "../contract/keys";
import type { Clock } from "./clock";
import { utcDay } from "./clock";
import { createKey } from "./handlers/keys";
import { renderAllocation, renderCharge, renderKey, renderProxyUser } from "./render";
import type { Store } from "./store";
import { sha256Hex } from "./tokens";

/** Out-of-band levers for tests and the demo: what the dashboard and the gateways do in the real service. */
export interface ServerControl {
  setIpHealth(ipOrAllocationId: string, patch: { health?: "good" | "degraded" | "bad"; blacklists?: number }): void;
  /** Traffic as the gateways would report it; `at` defaults to the server clock's now. */
  recordTraffic(proxyUserId: string, bytes: number, requests: number, at?: number): void;
  /** Like the dashboard: no scope checks, the secret is returned once. */
  createKey(opts: { name: string; scopes: string[]; expiresAt?: string | null }): { id: string; secret: string };
  setBalance(cents: number): void;
  /** What the gateway checks at login: whether this is the proxy user's password. */
  passwordMatches(proxyUserId: string, password: string): boolean;
  /** Everything the account holds, as the API would render it. */
  snapshot(): { proxyUsers: unknown[]; ips: unknown[]; keys: unknown[]; charges: unknown[] };
}

function requireCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
}

export function createControl(store: Store, clock: Clock, onCommit: () => void): ServerControl {
  return {
    setIpHealth(ipOrAllocationId, patch) {
      if (!IpPathSegment.safeParse(ipOrAllocationId).success)
        throw new TypeError(`not an address or allocation id: ${ipOrAllocationId}`);
      const allocation = store.allocations.get(ipOrAllocationId) ?? store.allocationByIp(ipOrAllocationId);
      if (!allocation) throw new Error(`the account holds no allocation ${ipOrAllocationId}`);
      if (patch.health !== undefined) allocation.health = IpHealth.parse(patch.health);
      if (patch.blacklists !== undefined) {
        requireCount("blacklists", patch.blacklists);
        allocation.blacklists = patch.blacklists;
      }
      store.touched("ips", allocation.id);
      onCommit();
    },

    recordTraffic(proxyUserId, bytes, requests, at) {
      if (!store.proxyUsers.get(proxyUserId)) throw new Error(`no proxy user ${proxyUserId}`);
      requireCount("bytes", bytes);
      requireCount("requests", requests);
      store.recordTraffic(proxyUserId, utcDay(at ?? clock.now()), bytes, requests);
      onCommit();
    },

    createKey(opts) {
      const parsed = CreateApiKeyBody.safeParse({
        name: opts.name,
        scopes: opts.scopes,
        ...(opts.expiresAt ? { expires_at: opts.expiresAt } : {}),
      });
      if (!parsed.success) {
        throw new TypeError(
          `invalid key: ${toWireIssues(parsed.error)
            .map((issue) => `${issue.path} ${issue.message}`)
            .join("; ")}`,
        );
      }
      const expiresAt = parsed.data.expires_at === undefined ? null : Date.parse(parsed.data.expires_at);
      const { record, secret } = createKey(store, clock.now(), {
        name: parsed.data.name,
        scopes: parsed.data.scopes,
        expiresAt,
      });
      onCommit();
      return { id: record.id, secret };
    },

    setBalance(cents) {
      if (!Number.isSafeInteger(cents))
        throw new RangeError(`balance must be an integer number of cents, got ${cents}`);
      store.balanceCents = cents;
      onCommit();
    },

    passwordMatches(proxyUserId, password) {
      const user = store.proxyUsers.get(proxyUserId);
      return user !== undefined && user.passwordHash === sha256Hex(password);
    },

    snapshot() {
      const now = clock.now();
      return {
        proxyUsers: [...store.proxyUsers.values()].map(renderProxyUser),
        ips: [...store.allocations.values()].map((allocation) => renderAllocation(allocation, now)),
        keys: [...store.keys.values()].map((key) => renderKey(key, now)),
        charges: [...store.charges.values()].reverse().map(renderCharge),
      };
    },
  };
}
