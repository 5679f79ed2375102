import type { IncomingMessage } from "node:http";
import { authenticate, requireScopes, SecretHasher } from "./auth";
import { FailedAuthentications } from "./authFailures";
import type { Clock } from "./clock";
import { ApiError, errorBody, invalidRequest } from "./errors";
import type { Reply } from "./http";
import { IdempotencyLedger, idempotencyKeyIssue, requestFingerprint } from "./idempotency";
import { redactPath } from "./logRedaction";
import { RateLimiter } from "./rateLimit";
import { NO_BODY, PayloadTooLarge, parseWith, plainQuery, readJsonBody } from "./requestInput";
import type { RequestLog } from "./requestLog";
import type { RouteMatch, Router } from "./routes";
import type { Store } from "./store";

/** One request as the pipeline fills it in: who sent it, and the rate headers every answer carries. */
export interface Exchange {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  keyId: string | undefined;
  rateHeaders: Record<string, string>;
}

export interface PipelineOptions {
  store: Store;
  clock: Clock;
  rateLimitPerMinute: number;
  /** Failed authentications per client address and minute before the address gets 429. */
  failedAuthPerMinute: number;
  router: Router;
  requestLog: RequestLog;
  /** A request was refused for the key's rate limit. */
  onRateLimited: () => void;
  /** A state change committed; the owner persists it. */
  onCommit: () => void;
}

/**
 * The API's answer to one request, in the contract's order: authentication → rate limit → route →
 * scopes → body → idempotency → validation → handler. Everything after the body is read runs
 * synchronously. Every failure becomes the contract's error answer; nothing here knows of faults.
 */
export class ApiPipeline {
  readonly limiter: RateLimiter;
  private readonly hasher = new SecretHasher();
  private readonly ledger: IdempotencyLedger;
  private readonly failures: FailedAuthentications;

  constructor(private readonly options: PipelineOptions) {
    this.limiter = new RateLimiter(options.rateLimitPerMinute);
    this.failures = new FailedAuthentications(options.failedAuthPerMinute);
    this.ledger = new IdempotencyLedger(options.store);
  }

  async answer(req: IncomingMessage, exchange: Exchange, match: RouteMatch | null): Promise<Reply> {
    try {
      return await this.process(req, exchange, match);
    } catch (error) {
      return this.errorReply(exchange, error);
    }
  }

  private async process(req: IncomingMessage, exchange: Exchange, match: RouteMatch | null): Promise<Reply> {
    const { store, clock } = this.options;
    const address = req.socket.remoteAddress ?? "-";
    const blockedFor = this.failures.blockedFor(address, clock.now());
    if (blockedFor !== undefined) {
      const message = `Too many failed authentications from this address (${this.failures.limit} a minute); retry in ${blockedFor} s.`;
      return this.errorReply(
        exchange,
        new ApiError("rate_limited", message, undefined, { "retry-after": String(blockedFor) }),
      );
    }
    let authenticated: ReturnType<typeof authenticate>;
    try {
      authenticated = authenticate(req.headers.authorization, store, this.hasher, clock.now());
    } catch (error) {
      this.failures.fail(address, clock.now());
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
      this.options.onRateLimited();
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
    const allowed = this.options.router.allowedMethods(exchange.path);
    if (allowed.length === 0)
      return new ApiError("not_found", `There is no route ${exchange.method} ${redactPath(exchange.path)}.`);
    return new ApiError(
      "method_not_allowed",
      `${exchange.method} is not allowed here; use ${allowed.join(" or ")}.`,
      { allowed_methods: allowed },
      { allow: allowed.join(", ") },
    );
  }

  errorReply(exchange: Exchange, error: unknown): Reply {
    if (!(error instanceof ApiError)) {
      this.options.requestLog.internalError(exchange.requestId, error);
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
}
