import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { toWireIssues } from "../contract/common";
import { authenticate, requireScopes, SecretHasher } from "./auth";
import type { Clock } from "./clock";
import { ApiError, errorBody, invalidRequest } from "./errors";
import type { FailureKind, FaultInjector } from "./faults";
import type { HeldReplies } from "./holds";
import { BODY_LIMIT_BYTES, delay, isJsonContentType, type Reply, readBody, sendReply } from "./http";
import { IdempotencyLedger, idempotencyKeyIssue, requestFingerprint } from "./idempotency";
import { redactPath } from "./logRedaction";
import { RateLimiter } from "./rateLimit";
import { RequestLog } from "./requestLog";
import { type RouteMatch, Router } from "./routes";
import type { Store } from "./store";
import { requestIdFactory } from "./tokens";

/** Body of the endpoints that take none: `{}` or nothing at all. */
const NO_BODY = z.strictObject({});

export interface Stats {
  requests: number;
  byStatus: Record<string, number>;
  rateLimited: number;
  byRoute: Record<string, number>;
}

export interface AppOptions {
  store: Store;
  clock: Clock;
  rateLimitPerMinute: number;
  faults: FaultInjector;
  holds: HeldReplies;
  log: ((line: string) => void) | undefined;
  /** A state change committed; the owner persists it. */
  onCommit: () => void;
}

interface Exchange {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  keyId: string | undefined;
  rateHeaders: Record<string, string>;
}

/**
 * The request pipeline: fault plan → authentication → rate limit → route → scopes → body → idempotency
 * → validation → handler → (lost or held reply?) → send. Everything after the body is read runs synchronously.
 */
export class ReferenceApp {
  readonly limiter: RateLimiter;
  readonly hasher = new SecretHasher();
  stats: Stats = ReferenceApp.emptyStats();
  private readonly router = new Router();
  private readonly ledger: IdempotencyLedger;
  private readonly nextRequestId = requestIdFactory();
  private readonly requestLog: RequestLog;

  constructor(private readonly options: AppOptions) {
    this.requestLog = new RequestLog(options.log);
    this.limiter = new RateLimiter(options.rateLimitPerMinute);
    this.ledger = new IdempotencyLedger(options.store);
  }

  static emptyStats(): Stats {
    return { requests: 0, byStatus: {}, rateLimited: 0, byRoute: {} };
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = this.requestLog.start();
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    const queryStart = url.indexOf("?");
    const exchange: Exchange = {
      requestId: this.nextRequestId(),
      method,
      path: queryStart < 0 ? url : url.slice(0, queryStart),
      keyId: undefined,
      rateHeaders: {},
    };
    const match = this.router.find(method, url);
    this.stats.requests++;
    const label = match ? match.route.label : "unmatched";
    this.stats.byRoute[label] = (this.stats.byRoute[label] ?? 0) + 1;

    const plan = this.options.faults.plan(method, exchange.path, match?.route.endpoint.path);
    if (plan.delayBeforeMs > 0) await delay(plan.delayBeforeMs);
    let outcome: string;
    if (plan.failure?.phase === "before") {
      outcome = this.loseReply(res, exchange, plan.failure.kind);
    } else {
      let reply: Reply;
      try {
        reply = await this.process(req, exchange, match);
      } catch (error) {
        reply = this.errorReply(exchange, error);
      }
      if (plan.delayAfterMs > 0) await delay(plan.delayAfterMs);
      if (plan.hold) await this.options.holds.park(`${method} ${exchange.path}`);
      if (res.destroyed || res.socket?.destroyed !== false) {
        // A held reply whose client died meanwhile: the change stands, and nobody hears of it.
        outcome = "abandoned";
      } else if (plan.failure?.phase === "after") {
        outcome = this.loseReply(res, exchange, plan.failure.kind);
      } else {
        sendReply(res, exchange.requestId, reply);
        outcome = String(reply.status);
      }
    }
    this.stats.byStatus[outcome] = (this.stats.byStatus[outcome] ?? 0) + 1;
    this.requestLog.request(exchange, outcome, started);
  }

  private async process(req: IncomingMessage, exchange: Exchange, match: RouteMatch | null): Promise<Reply> {
    const { store, clock } = this.options;
    let authenticated: ReturnType<typeof authenticate>;
    try {
      authenticated = authenticate(req.headers.authorization, store, this.hasher, clock.now());
    } catch (error) {
      return this.errorReply(exchange, error);
    }
    const { key: caller, secret: callerSecret } = authenticated;
    exchange.keyId = caller.id;
    const rate = this.limiter.take(caller.id, clock.now());
    exchange.rateHeaders = {
      "x-ratelimit-limit": String(rate.limit),
      "x-ratelimit-remaining": String(rate.remaining),
      "x-ratelimit-reset": String(rate.resetSeconds),
    };
    if (rate.limited) {
      this.stats.rateLimited++;
      const message = `This API key has used its ${rate.limit} requests for this minute; retry in ${rate.resetSeconds} s.`;
      return this.errorReply(
        exchange,
        new ApiError("rate_limited", message, undefined, { "retry-after": String(rate.resetSeconds) }),
      );
    }
    if (!match) throw this.unmatched(exchange);
    const { route, params, searchParams } = match;
    if (!(route.selfService && params.id === caller.id)) requireScopes(caller, route.endpoint.scopes);
    const query = route.endpoint.query ? parseWith(route.endpoint.query, plainQuery(searchParams)) : undefined;

    let body: unknown;
    let idempotency: { key: string; fingerprint: string } | undefined;
    if (route.readsBody) {
      const json = await readJsonBody(req);
      const idempotencyKey = req.headers["idempotency-key"];
      if (exchange.method === "POST" && typeof idempotencyKey === "string") {
        const issue = idempotencyKeyIssue(idempotencyKey);
        if (issue) throw invalidRequest([issue]);
        idempotency = { key: idempotencyKey, fingerprint: requestFingerprint(exchange.method, exchange.path, json) };
        const first = this.ledger.find(caller.id, callerSecret, idempotency.key, idempotency.fingerprint, clock.now());
        if (first) {
          return {
            status: first.status,
            body: first.body,
            headers: { ...exchange.rateHeaders, "idempotent-replayed": "true" },
          };
        }
      }
      body = parseWith(route.endpoint.body ?? NO_BODY, json);
    }

    const now = clock.now();
    const result = route.handler({
      caller,
      endpoint: route.endpoint,
      params,
      query,
      body,
      now,
      store,
      secretsRetired: (keyId, revoked) => {
        this.hasher.forgetAll();
        if (revoked) this.limiter.forget(keyId);
      },
    });
    const status = route.endpoint.status;
    const text = status === 204 ? undefined : JSON.stringify(result);
    if (idempotency)
      this.ledger.remember(
        caller.id,
        callerSecret,
        idempotency.key,
        idempotency.fingerprint,
        { status, body: text },
        now,
      );
    if (route.changesState) this.options.onCommit();
    return { status, body: text, headers: exchange.rateHeaders };
  }

  private unmatched(exchange: Exchange): ApiError {
    const allowed = this.router.allowedMethods(exchange.path);
    if (allowed.length === 0)
      return new ApiError("not_found", `There is no route ${exchange.method} ${redactPath(exchange.path)}.`);
    return new ApiError(
      "method_not_allowed",
      `${exchange.method} is not allowed here; use ${allowed.join(" or ")}.`,
      { allowed_methods: allowed },
      { allow: allowed.join(", ") },
    );
  }

  private errorReply(exchange: Exchange, error: unknown): Reply {
    if (!(error instanceof ApiError)) {
      this.requestLog.internalError(exchange.requestId, error);
      error = new ApiError("internal_error", "The server hit an internal error; retry the request.");
    }
    const apiError = error as ApiError;
    return {
      status: apiError.status,
      body: errorBody(apiError.code, apiError.message, exchange.requestId, apiError.details),
      headers: { ...exchange.rateHeaders, ...apiError.headers },
      closeConnection: apiError instanceof PayloadTooLarge && !apiError.drained,
    };
  }

  /** The fault: an error status in place of the real answer, or a connection dropped without one. */
  private loseReply(res: ServerResponse, exchange: Exchange, kind: FailureKind): string {
    if (kind === "reset") {
      res.socket?.destroy();
      return "reset";
    }
    const error =
      kind === "503"
        ? new ApiError("service_unavailable", "The service is temporarily unavailable; retry the request.")
        : new ApiError("internal_error", "The server hit an internal error; retry the request.");
    sendReply(res, exchange.requestId, { ...this.errorReply({ ...exchange, rateHeaders: {} }, error) });
    return kind;
  }
}

class PayloadTooLarge extends ApiError {
  constructor(readonly drained: boolean) {
    super("payload_too_large", `The request body is larger than ${BODY_LIMIT_BYTES} bytes.`, {
      limit_bytes: BODY_LIMIT_BYTES,
    });
  }
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const read = await readBody(req);
  if (read.kind === "aborted") throw new ApiError("invalid_request", "The request body was cut off.");
  if (read.kind === "too_large") {
    throw new PayloadTooLarge(read.drained);
  }
  if (read.text.length === 0) return {};
  if (!isJsonContentType(req.headers["content-type"])) {
    throw new ApiError(
      "unsupported_media_type",
      "Request bodies must be JSON, sent with content-type: application/json.",
    );
  }
  try {
    return JSON.parse(read.text) as unknown;
  } catch {
    throw invalidRequest([{ path: "(body)", message: "is not valid JSON" }], "The request body is not valid JSON.");
  }
}

function parseWith(schema: z.ZodType, input: unknown): unknown {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidRequest(toWireIssues(parsed.error));
  return parsed.data;
}

function plainQuery(searchParams: Record<string, string | string[]>): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(searchParams)) {
    if (Array.isArray(value)) throw invalidRequest([{ path: name, message: "must be given at most once" }]);
    query[name] = value;
  }
  return query;
}
