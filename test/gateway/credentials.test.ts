import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../server";
import { Admission, type LoginSlot } from "../../server/gateway/admission";
import { PropagatingDirectory } from "../../server/gateway/directory";
import { FailedLogins } from "../../server/gateway/logins";
import { Refusal } from "../../server/gateway/refusals";
import { RateLimiter } from "../../server/rateLimit";
import { Store } from "../../server/store";
import { sha256Hex } from "../../server/tokens";
import { basic, type GatewayFixture, gatewayFixture, viaGateway } from "./harness";

let fixture: GatewayFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const PASSWORD = "the-right-password";

/** An Admission over a store holding `alice`, with an injected password hash so a test sees each call. */
function admissionWith(hash: (password: string) => string, failedLogins: FailedLogins) {
  const store = new Store(0);
  store.addProxyUser({
    id: "pu_alice000000000000",
    seq: 1,
    name: "alice",
    limits: { daily_gb: null, monthly_gb: null },
    enabled: true,
    createdAt: 0,
    updatedAt: 0,
    passwordHash: sha256Hex(PASSWORD),
  });
  const clock = new ManualClock(Date.UTC(2025, 0, 1));
  const limits = { limiter: new RateLimiter(1_000_000, 1000), failedLogins, maxOpenPerUser: 10, openCount: () => 0 };
  return new Admission(store, clock, new PropagatingDirectory(store, 0), limits, hash);
}

/** An Admission whose password hashes are recorded, failed logins barely limited. */
function countingHashes() {
  const hashed: string[] = [];
  const admission = admissionWith(
    (password) => {
      hashed.push(password);
      return sha256Hex(password);
    },
    new FailedLogins({ perUsername: 100, perAddress: 100 }),
  );
  return { admission, hashed };
}

function refusalCode(attempt: () => unknown): string {
  try {
    attempt();
  } catch (error) {
    if (error instanceof Refusal) return error.code;
  }
  return "admitted";
}

/** Every string reachable from `root` (own properties, Map and Set entries), to look for a plaintext password. */
function reachableStrings(root: unknown): string[] {
  const seen = new Set<unknown>();
  const found: string[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === "string") found.push(value);
    if (typeof value !== "object" || value === null || seen.has(value)) return;
    seen.add(value);
    if (value instanceof Map) {
      for (const [key, entry] of value) {
        visit(key);
        visit(entry);
      }
    } else if (value instanceof Set) for (const entry of value) visit(entry);
    else for (const entry of Object.values(value)) visit(entry);
  };
  visit(root);
  return found;
}

describe("gateway authentication", () => {
  it("does the same work for an unknown username as for a wrong password: one hash of the presented password each", () => {
    const { admission, hashed } = countingHashes();
    expect(refusalCode(() => admission.admit(basic("nobody", "guess-1"), () => "127.0.0.1"))).toBe(
      "invalid_credentials",
    );
    expect(refusalCode(() => admission.admit(basic("alice", "guess-2"), () => "127.0.0.1"))).toBe(
      "invalid_credentials",
    );
    expect(refusalCode(() => admission.admit(basic("alice", PASSWORD), () => "127.0.0.1"))).toBe("admitted");
    expect(hashed).toEqual(["guess-1", "guess-2", PASSWORD]);
  });

  it("skips the password hash for a header that proved a login, on any connection; any other header, or a user made anew, is checked in full", () => {
    const { admission, hashed } = countingHashes();
    const connection: LoginSlot = {};
    for (let i = 0; i < 3; i++) admission.admit(basic("alice", PASSWORD), () => "127.0.0.1", connection);
    admission.admit(basic("alice", PASSWORD), () => "127.0.0.1");
    expect(hashed).toEqual([PASSWORD]);
    // The connection keeps a fingerprint and whose login it proved: no header, no password.
    const header = basic("alice", PASSWORD);
    expect(connection.proven?.login.username).toBe("alice");
    expect(reachableStrings(connection).filter((text) => text.includes(PASSWORD) || text === header)).toEqual([]);
    const wrong = () => admission.admit(basic("alice", `${PASSWORD}x`), () => "127.0.0.1", connection);
    expect(refusalCode(wrong)).toBe("invalid_credentials");
    expect(refusalCode(wrong)).toBe("invalid_credentials");
    expect(hashed).toEqual([PASSWORD, `${PASSWORD}x`, `${PASSWORD}x`]);

    // alice deleted and made again under the same name with another password: the old header no longer proves anything.
    const { store } = admission as unknown as { store: Store };
    const alice = store.proxyUserByName("alice") as NonNullable<ReturnType<Store["proxyUserByName"]>>;
    store.deleteProxyUser(alice);
    store.addProxyUser({ ...alice, id: "pu_alice000000000001", seq: 2, passwordHash: sha256Hex("another") });
    expect(refusalCode(() => admission.admit(header, () => "127.0.0.1", connection))).toBe("invalid_credentials");
    expect(hashed).toHaveLength(4);
  });

  it("refuses a header that proved a login once its username is over the failed-login budget", () => {
    const admission = admissionWith(sha256Hex, new FailedLogins({ perUsername: 2, perAddress: 100 }));
    admission.admit(basic("alice", PASSWORD), () => "127.0.0.1");
    for (let i = 0; i < 2; i++) refusalCode(() => admission.admit(basic("alice", `guess-${i}`), () => "10.0.0.9"));
    expect(refusalCode(() => admission.admit(basic("alice", PASSWORD), () => "127.0.0.1"))).toBe("rate_limited");
  });

  it("keeps no presented password, and stays bounded under a flood of new usernames by refusing them, not by forgetting", () => {
    const failedLogins = new FailedLogins({ perUsername: 5, perAddress: 1_000_000_000 }, 1000);
    const admission = admissionWith(sha256Hex, failedLogins);
    admission.admit(basic("alice", PASSWORD), () => "127.0.0.1");
    for (let i = 0; i < 5; i++) refusalCode(() => admission.admit(basic("bob", `guess-${i}`), () => "127.0.0.1"));
    const codes = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const code = refusalCode(() => admission.admit(basic(`user-${i}`, `flood-${i}`), () => "127.0.0.1"));
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    // 999 new names fit beside bob's; the rest are refused unchecked, and bob's budget is still in force.
    expect(Object.fromEntries(codes)).toEqual({ invalid_credentials: 999, rate_limited: 19_001 });
    expect(refusalCode(() => admission.admit(basic("bob", "guess-5"), () => "127.0.0.1"))).toBe("rate_limited");
    const strings = reachableStrings(admission);
    const header = basic("alice", PASSWORD);
    expect(strings.filter((text) => text.includes(PASSWORD) || text.includes("flood-") || text === header)).toEqual([]);
    // Only the one login that succeeded is remembered, by its header's hash.
    expect((admission as unknown as { proven: Map<string, unknown> }).proven.size).toBe(1);
    expect(failedLogins.tracked).toBeLessThanOrEqual(3 * 1000);
  });

  it("limits failed logins per username, known or not, and refuses even the right password while limited", async () => {
    const clock = new ManualClock(Date.UTC(2025, 0, 1, 12));
    fixture = await gatewayFixture({ clock, gateway: { failedLogins: { perUsername: 3, perAddress: 100 } } });
    const { origin, user, server, api } = fixture;
    const other = await api.proxyUsers.create({ name: "other" });
    const attempt = async (username: string, password: string) => {
      const answer = await viaGateway(server.gatewayUrl, `${origin.url}/hello`, basic(username, password));
      return answer.headers["x-proxy-error"] ?? String(answer.status);
    };
    for (const name of [user.username, "ghost"]) {
      for (let i = 0; i < 3; i++) expect(await attempt(name, `wrong-${i}`)).toBe("invalid_credentials");
      expect(await attempt(name, "wrong-again")).toBe("rate_limited");
    }
    // No oracle while limited: the right password gets the same 429.
    const limited = await viaGateway(server.gatewayUrl, `${origin.url}/hello`, basic(user.username, user.password));
    expect([limited.status, limited.headers["x-proxy-error"]]).toEqual([429, "rate_limited"]);
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expect(await attempt(other.username, other.password)).toBe("200");
    clock.advance(60_000);
    expect(await attempt(user.username, user.password)).toBe("200");
  });

  it("limits failed logins per client address, whatever names it tries", async () => {
    const clock = new ManualClock(Date.UTC(2025, 0, 1, 12));
    fixture = await gatewayFixture({ clock, gateway: { failedLogins: { perUsername: 100, perAddress: 5 } } });
    const { origin, user, server } = fixture;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, basic(`name-${i}`, "x"))).status);
    expect(statuses).toEqual([407, 407, 407, 407, 407, 429]);
    const auth = basic(user.username, user.password);
    expect((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth)).status).toBe(429);
    clock.advance(60_000);
    expect((await viaGateway(server.gatewayUrl, `${origin.url}/hello`, auth)).status).toBe(200);
  });
});
