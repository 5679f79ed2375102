/**
 * Chaos for the clients under test. "before" faults fail a request before it touches any state;
 * "after" faults let the state change commit and then lose the reply, which is exactly what makes a
 * careless client create the same object twice.
 */
export interface FaultOptions {
  /** Chance per request of answering 500/503 before any state changes. */
  errorRate?: number;
  /** Statuses the error faults pick from; default both. */
  errorStatuses?: (500 | 503)[];
  /** Chance per request of dropping the connection without a reply, before any state changes. */
  dropRate?: number;
  /** Delay added to a request picked by latencyRate. */
  latencyMs?: number;
  /** Chance per request of the added latency; default 1 when latencyMs is set. */
  latencyRate?: number;
  /**
   * Chance per state-changing request (POST, PATCH, DELETE) that the change commits and the reply is
   * then lost: as one of errorStatuses, or as a dropped connection.
   */
  afterCommitRate?: number;
  /** Makes the random faults reproducible. */
  seed?: number;
}

export interface InjectedFault {
  method?: string;
  /** The concrete path (`/v1/proxy-users/pu_x`), the route template (`/v1/proxy-users/{id}`), or a RegExp on the path. */
  path?: string | RegExp;
  /**
   * "hold": the request is processed (its state change commits) and its reply is parked until the
   * test releases it (`releaseHeldReplies`). A test then knows exactly which writes are in flight when
   * it kills a client. `phase` does not apply.
   */
  kind: "500" | "503" | "reset" | "latency" | "hold";
  phase?: "before" | "after";
  count?: number;
  latencyMs?: number;
}

export type FailureKind = "500" | "503" | "reset";

export interface FaultPlan {
  delayBeforeMs: number;
  delayAfterMs: number;
  failure: { kind: FailureKind; phase: "before" | "after" } | null;
  /** Park the reply after the state change until released. */
  hold?: boolean;
}

const STATE_CHANGING = new Set(["POST", "PATCH", "DELETE"]);
const NO_FAULT: FaultPlan = Object.freeze({ delayBeforeMs: 0, delayAfterMs: 0, failure: null });

/** mulberry32: tiny, seedable, good enough to scatter faults. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function checkRate(name: string, value: number | undefined): void {
  if (value !== undefined && !(value >= 0 && value <= 1))
    throw new RangeError(`${name} must be between 0 and 1, got ${value}`);
}

export class FaultInjector {
  private options: FaultOptions = {};
  private random: () => number = Math.random;
  private readonly injected: (InjectedFault & { remaining: number })[] = [];

  constructor(options: FaultOptions = {}) {
    this.setOptions(options);
  }

  setOptions(options: FaultOptions): void {
    for (const name of ["errorRate", "dropRate", "latencyRate", "afterCommitRate"] as const)
      checkRate(name, options[name]);
    if (options.latencyMs !== undefined && !(options.latencyMs >= 0))
      throw new RangeError("latencyMs must be at least 0");
    if (options.errorStatuses?.length === 0) throw new RangeError("errorStatuses must not be empty");
    this.options = { ...options };
    this.random = options.seed === undefined ? Math.random : seededRandom(options.seed);
  }

  inject(fault: InjectedFault): void {
    const count = fault.count ?? 1;
    if (!Number.isInteger(count) || count < 1) throw new RangeError("count must be a positive integer");
    if (fault.kind === "latency" && !(fault.latencyMs !== undefined && fault.latencyMs >= 0)) {
      throw new RangeError("a latency fault needs latencyMs");
    }
    this.injected.push({ ...fault, remaining: count });
  }

  /** The settings as given, and how many injected faults are still waiting: for the console. */
  describe(): {
    options: FaultOptions;
    injected: { method?: string; path?: string; kind: string; remaining: number }[];
  } {
    return {
      options: { ...this.options },
      injected: this.injected.map((fault) => ({
        ...(fault.method !== undefined ? { method: fault.method } : {}),
        ...(fault.path !== undefined ? { path: String(fault.path) } : {}),
        kind: fault.kind,
        remaining: fault.remaining,
      })),
    };
  }

  get active(): boolean {
    const o = this.options;
    return this.injected.length > 0 || !!(o.errorRate || o.dropRate || o.afterCommitRate || o.latencyMs);
  }

  plan(method: string, path: string, template: string | undefined): FaultPlan {
    if (!this.active) return NO_FAULT;
    return this.takeInjected(method, path, template) ?? this.roll(method);
  }

  private takeInjected(method: string, path: string, template: string | undefined): FaultPlan | undefined {
    const index = this.injected.findIndex((fault) => matches(fault, method, path, template));
    const fault = this.injected[index];
    if (fault === undefined) return undefined;
    if (--fault.remaining === 0) this.injected.splice(index, 1);
    if (fault.kind === "hold") return { delayBeforeMs: 0, delayAfterMs: 0, failure: null, hold: true };
    const phase = fault.phase ?? "before";
    if (fault.kind === "latency") {
      const delay = fault.latencyMs ?? 0;
      return {
        delayBeforeMs: phase === "before" ? delay : 0,
        delayAfterMs: phase === "after" ? delay : 0,
        failure: null,
      };
    }
    return { delayBeforeMs: 0, delayAfterMs: 0, failure: { kind: fault.kind, phase } };
  }

  private roll(method: string): FaultPlan {
    const o = this.options;
    const latency = o.latencyMs && this.random() < (o.latencyRate ?? 1) ? o.latencyMs : 0;
    const statuses = o.errorStatuses ?? [500, 503];
    const pickStatus = (): FailureKind =>
      String(statuses[Math.floor(this.random() * statuses.length)] ?? 500) as FailureKind;
    let failure: FaultPlan["failure"] = null;
    if (o.errorRate && this.random() < o.errorRate) failure = { kind: pickStatus(), phase: "before" };
    else if (o.dropRate && this.random() < o.dropRate) failure = { kind: "reset", phase: "before" };
    else if (o.afterCommitRate && STATE_CHANGING.has(method) && this.random() < o.afterCommitRate) {
      const lostAsDrop = this.random() < 1 / (statuses.length + 1);
      failure = { kind: lostAsDrop ? "reset" : pickStatus(), phase: "after" };
    }
    if (latency === 0 && failure === null) return NO_FAULT;
    return { delayBeforeMs: latency, delayAfterMs: 0, failure };
  }
}

function matches(fault: InjectedFault, method: string, path: string, template: string | undefined): boolean {
  if (fault.method !== undefined && fault.method.toUpperCase() !== method) return false;
  if (fault.path === undefined) return true;
  if (typeof fault.path === "string") return fault.path === path || fault.path === template;
  fault.path.lastIndex = 0;
  return fault.path.test(path);
}
