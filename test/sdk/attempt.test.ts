import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AttemptOptions, sendAttempt } from "../../sdk/core/attempt";
import { initialState, type RateGate, type RateObservation } from "../../sdk/core/pacer";
import { CallScope } from "../../sdk/core/scope";
import { Semaphore } from "../../sdk/core/semaphore";
import type { Call, TransportEvent } from "../../sdk/core/types";

/**
 * One attempt on its own, against a loopback server: what it puts on the wire from its options, and
 * what it tells the pacer. The retry loop around it is tested through the client elsewhere.
 */

const API_KEY = "live_attemptTestKey0000000000000000000";
let server: Server;
let origin: string;
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on("end", () => {
      if (req.url === "/v1/reset") return req.socket.destroy();
      const rateHeaders =
        req.url === "/v1/unpaced"
          ? {}
          : { "x-ratelimit-limit": "600", "x-ratelimit-remaining": "41", "x-ratelimit-reset": "17" };
      res.writeHead(200, { "content-type": "application/json", "x-request-id": "req_1", ...rateHeaders });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A pacer that only writes down what it is told. */
function recordingGate(): RateGate & { told: string[]; observed: RateObservation[] } {
  const told: string[] = [];
  const observed: RateObservation[] = [];
  return {
    told,
    observed,
    state: initialState(),
    acquire: async () => void told.push("acquire"),
    observe: (obs) => {
      told.push("observe");
      observed.push(obs);
    },
    lost: () => void told.push("lost"),
    unpaced: () => void told.push("unpaced"),
    rateLimited: () => void told.push("rateLimited"),
  };
}

function optionsFor(
  call: Call<unknown>,
  extra: Partial<AttemptOptions> = {},
): AttemptOptions & { events: TransportEvent[] } {
  const events: TransportEvent[] = [];
  return {
    events,
    apiKey: API_KEY,
    userAgent: "attempt-test/1",
    semaphore: new Semaphore(1),
    pacer: undefined,
    dispatcher: undefined,
    stats: { requests: 0, retries: 0, rateLimited: 0 },
    emit: (event) => events.push(event),
    call,
    url: `${origin}${call.path}`,
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
    idempotencyKey: undefined,
    attempt: 0,
    timeoutMs: 5_000,
    scope: new CallScope(call.method, call.path, {}),
    onSend: undefined,
    ...extra,
  };
}

describe("one attempt", () => {
  it("sends the key and user agent, content-type only with a body, and the idempotency key it is given", async () => {
    seen.length = 0;
    const post = optionsFor({ method: "POST", path: "/v1/keys", body: { name: "a" } }, { idempotencyKey: "idem-7" });
    const outcome = await sendAttempt(post);
    expect(outcome).toMatchObject({ kind: "answer", status: 200, text: "{}" });
    await sendAttempt(optionsFor({ method: "GET", path: "/v1/keys" }));
    expect(seen[0]).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      "user-agent": "attempt-test/1",
      "content-type": "application/json",
      "idempotency-key": "idem-7",
    });
    expect(seen[1]?.["content-type"]).toBeUndefined();
    expect(seen[1]?.["idempotency-key"]).toBeUndefined();
  });

  it("counts itself, calls onSend once, and logs its request and response under its attempt number", async () => {
    let sends = 0;
    const options = optionsFor({ method: "GET", path: "/v1/keys" }, { attempt: 3, onSend: () => void sends++ });
    await sendAttempt(options);
    expect(options.stats.requests).toBe(1);
    expect(sends).toBe(1);
    expect(options.events.map((e) => [e.type, e.attempt])).toEqual([
      ["request", 3],
      ["response", 3],
    ]);
    expect(options.events[1]).toMatchObject({ status: 200, requestId: "req_1", replayed: false });
  });

  it("tells the pacer what each answer said of the rate limit, and gives its turn back when none came", async () => {
    const gate = recordingGate();
    await sendAttempt(optionsFor({ method: "GET", path: "/v1/keys" }, { pacer: gate }));
    expect(gate.observed[0]).toMatchObject({ limit: 600, remaining: 41, resetSeconds: 17 });
    await sendAttempt(optionsFor({ method: "GET", path: "/v1/unpaced" }, { pacer: gate }));
    const reset = await sendAttempt(optionsFor({ method: "GET", path: "/v1/reset" }, { pacer: gate }));
    expect(reset).toMatchObject({ kind: "network", neverSent: false });
    expect(gate.told).toEqual(["acquire", "observe", "acquire", "unpaced", "acquire", "lost"]);
  });

  it("goes through the dispatcher it is given", async () => {
    const agent = new Agent();
    const dispatched: string[] = [];
    const dispatcher = agent.compose((dispatch) => (opts, handler) => {
      dispatched.push(`${opts.method} ${opts.path}`);
      return dispatch(opts, handler);
    });
    try {
      await sendAttempt(optionsFor({ method: "GET", path: "/v1/keys" }, { dispatcher }));
    } finally {
      await agent.close();
    }
    expect(dispatched).toEqual(["GET /v1/keys"]);
  });
});
