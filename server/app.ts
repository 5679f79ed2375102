import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "./errors";
import type { FailureKind, FaultInjector } from "./faults";
import type { HeldReplies } from "./holds";
import { delay, sendReply } from "./http";
import { ApiPipeline, type Exchange, type PipelineOptions } from "./pipeline";
import type { RateLimiter } from "./rateLimit";
import { RequestLog } from "./requestLog";
import { Router } from "./routes";
import { requestIdFactory } from "./tokens";

export interface Stats {
  requests: number;
  byStatus: Record<string, number>;
  rateLimited: number;
  byRoute: Record<string, number>;
}

export interface AppOptions
  extends Pick<PipelineOptions, "store" | "clock" | "rateLimitPerMinute" | "failedAuthPerMinute" | "onCommit"> {
  faults: FaultInjector;
  holds: HeldReplies;
  log: ((line: string) => void) | undefined;
}

/**
 * One exchange on the wire: count it, apply the fault plan, let the API pipeline answer, then lose,
 * hold or send the reply, and log it. The faults and holds are the emulation's; the answer is the API's.
 */
export class ReferenceApp {
  readonly limiter: RateLimiter;
  stats: Stats = ReferenceApp.emptyStats();
  private readonly router = new Router();
  private readonly nextRequestId = requestIdFactory();
  readonly requestLog: RequestLog;
  private readonly pipeline: ApiPipeline;

  constructor(private readonly options: AppOptions) {
    this.requestLog = new RequestLog(options.log);
    this.pipeline = new ApiPipeline({
      store: options.store,
      clock: options.clock,
      rateLimitPerMinute: options.rateLimitPerMinute,
      failedAuthPerMinute: options.failedAuthPerMinute,
      router: this.router,
      requestLog: this.requestLog,
      onRateLimited: () => this.stats.rateLimited++,
      onCommit: options.onCommit,
    });
    this.limiter = this.pipeline.limiter;
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
      const reply = await this.pipeline.answer(req, exchange, match);
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
    sendReply(res, exchange.requestId, { ...this.pipeline.errorReply({ ...exchange, rateHeaders: {} }, error) });
    return kind;
  }
}
