import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ClientOptions,
  ProxyClient,
  RequestAbortedError,
  ServerError,
  TimeoutError,
  type TransportEvent,
} from "../../sdk";
import { type ReferenceServer, startReferenceServer } from "../../server";

let server: ReferenceServer;
const fast = { retryBaseDelayMs: 5, retryMaxDelayMs: 40 };
const clientFor = (extra: Partial<ClientOptions> = {}) =>
  new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, ...fast, ...extra });

beforeAll(async () => {
  server = await startReferenceServer({ balanceCents: 1_000_000 });
});
afterAll(() => server.close());

type Snapshot = ReturnType<ReferenceServer["control"]["snapshot"]>;
const named = (snap: Snapshot, list: "proxyUsers" | "keys", name: string) =>
  (snap[list] as { name: string }[]).filter((x) => x.name === name);

const FAULTS = [
  ["500", "before"],
  ["503", "before"],
  ["reset", "before"],
  ["500", "after"],
  ["503", "after"],
  ["reset", "after"],
] as const;

describe.each(FAULTS)("a %s fault %s the state change", (kind, phase) => {
  const tag = `${kind}-${phase}`;

  it("create (POST) retries under one idempotency key and makes exactly one object", async () => {
    const events: TransportEvent[] = [];
    const client = clientFor({ logger: (e) => events.push(e) });
    server.injectFault({ method: "POST", path: "/v1/proxy-users", kind, phase });
    const user = await client.proxyUsers.create({ name: `dup-${tag}` });
    expect(named(server.control.snapshot(), "proxyUsers", `dup-${tag}`)).toHaveLength(1);
    expect(client.stats.retries).toBe(1);
    const keys = events.flatMap((e) => (e.type === "request" ? [e.idempotencyKey] : []));
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    if (phase === "after") expect(events.some((e) => e.type === "response" && e.replayed)).toBe(true);
    expect(user.password.length).toBeGreaterThan(0);
  });

  it("update (PATCH) ends in the state asked for", async () => {
    const client = clientFor();
    const user = await client.proxyUsers.create({ name: `patch-${tag}` });
    server.injectFault({ method: "PATCH", path: "/v1/proxy-users/{id}", kind, phase });
    const updated = await client.proxyUsers.update(user.id, {
      limits: { daily_gb: 3, monthly_gb: 30 },
      enabled: false,
    });
    expect(updated).toMatchObject({ enabled: false, limits: { daily_gb: 3, monthly_gb: 30 } });
    expect(client.stats.retries).toBe(1);
  });

  it("delete (DELETE) succeeds even when the lost reply already deleted it", async () => {
    const client = clientFor();
    const user = await client.proxyUsers.create({ name: `del-${tag}` });
    server.injectFault({ method: "DELETE", path: "/v1/proxy-users/{id}", kind, phase });
    await client.proxyUsers.delete(user.id);
    expect(named(server.control.snapshot(), "proxyUsers", `del-${tag}`)).toHaveLength(0);
  });

  it("top-up (POST) is counted once", async () => {
    const client = clientFor();
    const before = (await client.billing.balance()).balance_cents;
    server.injectFault({ method: "POST", path: "/v1/billing/top-up", kind, phase });
    const after = await client.billing.topUp({ amount_cents: 777 });
    expect(after.balance_cents).toBe(before + 777);
    expect((await client.billing.balance()).balance_cents).toBe(before + 777);
  });
});

describe("other writes under an after-commit fault", () => {
  it("key creation makes one key and allocation one address and one charge", async () => {
    const client = clientFor();
    server.injectFault({ method: "POST", path: "/v1/keys", kind: "reset", phase: "after" });
    await client.keys.create({ name: "after-fault-key", scopes: ["usage:read"] });
    expect(named(server.control.snapshot(), "keys", "after-fault-key")).toHaveLength(1);

    const before = server.control.snapshot();
    server.injectFault({ method: "POST", path: "/v1/ips", kind: "503", phase: "after" });
    const alloc = await client.ips.allocate({ product: "isp", country: "jp" });
    const after = server.control.snapshot();
    expect(after.ips.length).toBe(before.ips.length + 1);
    expect(after.charges.length).toBe(before.charges.length + 1);
    expect((after.ips as { id: string }[]).map((a) => a.id)).toContain(alloc.id);
  });

  it("DELETE that finds nothing on its first attempt is still a 404", async () => {
    await expect(clientFor().proxyUsers.delete("pu_neverexisted")).rejects.toMatchObject({ status: 404 });
  });
});

describe("random chaos", () => {
  it("20 concurrent creates through errors, drops and lost replies make exactly 20 users", async () => {
    server.setFaults({ errorRate: 0.15, dropRate: 0.1, afterCommitRate: 0.3, seed: 7 });
    try {
      const client = clientFor({ maxRetries: 12 });
      const names = Array.from({ length: 20 }, (_, i) => `chaos-${i}`);
      const created = await Promise.all(
        names.map((name) => client.proxyUsers.create({ name, limits: { daily_gb: 1, monthly_gb: 2 } })),
      );
      expect(new Set(created.map((u) => u.id)).size).toBe(20);
      expect(client.stats.retries).toBeGreaterThan(0);
      server.setFaults({});
      const snap = server.control.snapshot();
      for (const name of names) expect(named(snap, "proxyUsers", name)).toHaveLength(1);
      const listed = await client.proxyUsers.list({ limit: 200 }).all();
      expect(listed.filter((u) => u.name.startsWith("chaos-"))).toHaveLength(20);
    } finally {
      server.setFaults({});
    }
  });
});

describe("retries end by time, not count", () => {
  it("a delete that meets eight faults in a row still succeeds", async () => {
    const client = clientFor();
    const user = await client.proxyUsers.create({ name: "eight-faults" });
    server.injectFault({ method: "DELETE", path: "/v1/proxy-users/{id}", kind: "503", count: 8 });
    await client.proxyUsers.delete(user.id);
    expect(client.stats.retries).toBe(8);
    expect(named(server.control.snapshot(), "proxyUsers", "eight-faults")).toHaveLength(0);
  });

  it("a call that keeps failing gives up with the real cause once its retry window is spent", async () => {
    server.setFaults({ errorRate: 1, errorStatuses: [500] });
    try {
      const client = clientFor({ retryWindowMs: 200 });
      const err = await client.billing.balance().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServerError);
      expect(client.stats.retries).toBeGreaterThan(0);
    } finally {
      server.setFaults({});
    }
  });
});

describe("deadlines and abort", () => {
  it("a deadline cuts a slow attempt short with TimeoutError", async () => {
    server.injectFault({ path: "/v1/billing/balance", kind: "latency", latencyMs: 3_000 });
    const err = await clientFor()
      .billing.balance({ deadline: Date.now() + 100 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toBe("GET /v1/billing/balance: deadline passed");
  });

  it("an attempt that times out is retried, as any other ambiguous failure", async () => {
    server.injectFault({ path: "/v1/billing/balance", kind: "latency", latencyMs: 2_000, count: 1 });
    const events: TransportEvent[] = [];
    const client = clientFor({ timeoutMs: 200, logger: (e) => events.push(e) });
    const balance = await client.billing.balance();
    expect(balance).toBeDefined();
    expect(client.stats.retries).toBe(1);
    expect(events.some((e) => e.type === "network_error" && e.kind === "timeout")).toBe(true);
  });

  it("a write whose answer never came is retried under its key, and the replay makes no second object", async () => {
    server.injectFault({ method: "POST", path: "/v1/proxy-users", kind: "hold", count: 1 });
    const events: TransportEvent[] = [];
    const client = clientFor({ timeoutMs: 300, logger: (e) => events.push(e) });
    try {
      await client.proxyUsers.create({ name: "held-then-replayed" });
    } finally {
      server.releaseHeldReplies();
    }
    expect(named(server.control.snapshot(), "proxyUsers", "held-then-replayed")).toHaveLength(1);
    expect(events.some((e) => e.type === "response" && e.replayed)).toBe(true);
  });

  it("a deadline in the past fails before anything is sent", async () => {
    const client = clientFor();
    await expect(client.billing.balance({ deadline: Date.now() - 1 })).rejects.toBeInstanceOf(TimeoutError);
    expect(client.stats.requests).toBe(0);
  });

  it("gives up with the real cause when the next backoff would pass the deadline", async () => {
    server.injectFault({ path: "/v1/billing/balance", kind: "503", count: 1 });
    const client = clientFor({ retryBaseDelayMs: 10_000, retryMaxDelayMs: 10_000 });
    const random = Math.random;
    Math.random = () => 0.99; // make the full-jitter wait land near its ceiling
    try {
      const err = await client.billing.balance({ deadline: Date.now() + 1_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServerError);
      expect(client.stats.requests).toBe(1);
    } finally {
      Math.random = random;
    }
  });

  it("an abort while queued behind other calls frees the queue", async () => {
    const client = clientFor({ maxConcurrency: 1 });
    server.injectFault({ path: "/v1/billing/balance", kind: "latency", latencyMs: 300 });
    const slow = client.billing.balance();
    const ac = new AbortController();
    const queued = client.billing.balance({ signal: ac.signal });
    ac.abort();
    await expect(queued).rejects.toBeInstanceOf(RequestAbortedError);
    await slow;
    await expect(client.billing.balance()).resolves.toBeDefined();
    expect(client.stats.requests).toBe(2);
  });

  it("an already aborted signal sends nothing", async () => {
    const client = clientFor();
    await expect(client.proxyUsers.list({}, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      RequestAbortedError,
    );
    expect(client.stats.requests).toBe(0);
  });

  it("a caller-chosen idempotency key makes a manual retry safe", async () => {
    const client = clientFor();
    const first = await client.proxyUsers.create({ name: "manual-retry" }, { idempotencyKey: "manual-retry-1" });
    const again = await client.proxyUsers.create({ name: "manual-retry" }, { idempotencyKey: "manual-retry-1" });
    expect(again.id).toBe(first.id);
    expect(named(server.control.snapshot(), "proxyUsers", "manual-retry")).toHaveLength(1);
  });

  it("onSend hears each attempt as it goes on the wire, and nothing of a call that never left", async () => {
    const client = clientFor();
    let sent = 0;
    const onSend = () => {
      sent += 1;
    };
    server.injectFault({ method: "GET", path: "/v1/proxy-users", kind: "503", phase: "before" });
    await client.proxyUsers.list({}, { onSend });
    expect(sent).toBe(2);
    await expect(client.proxyUsers.list({}, { onSend, signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      RequestAbortedError,
    );
    expect(sent).toBe(2);
    const throwing = () => {
      throw new Error("a broken hook");
    };
    await expect(client.proxyUsers.list({}, { onSend: throwing })).resolves.toHaveProperty("items");
  });

  it("onAnswer tells a fresh answer from a replay, including the replay of the call's own lost reply", async () => {
    const client = clientFor();
    const answers: boolean[] = [];
    const onAnswer = ({ replayed }: { replayed: boolean }) => answers.push(replayed);
    await client.proxyUsers.create({ name: "answer-fresh" }, { onAnswer });
    // The server commits the create and drops the reply; the retry under the same key is answered by a replay.
    server.injectFault({ method: "POST", path: "/v1/proxy-users", kind: "reset", phase: "after" });
    await client.proxyUsers.create({ name: "answer-lost" }, { onAnswer });
    expect(answers).toEqual([false, true]);
    expect(named(server.control.snapshot(), "proxyUsers", "answer-lost")).toHaveLength(1);
  });
});
