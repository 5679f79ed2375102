import type { Stack } from "@pulumi/pulumi/automation";
import { ProxyClient } from "../sdk";
import { type ReferenceServer, type Stats, startReferenceServer } from "../server";
import { freshWindow, WINDOW_MS, type WindowAtStart } from "./floors";
import { createBenchStack, ProviderMemory, timed, WindowClock } from "./harness";
import type { Installed } from "./install";
import { noopProgram, realProgram, resourceCount, type StackShape } from "./programs";

/**
 * One stack shape through up, preview, refresh and destroy against the reference server at its real
 * limit, next to the same stack behind a no-op provider (the engine floor). Each measured phase
 * starts as a rate-limit window opens; in a crowded case another client of the same key first
 * spends part of that window.
 */

export const RATE_LIMIT_PER_MINUTE = 600;

export interface Measured {
  seconds: number;
  requests: number;
  rateLimited: number;
  /** Requests by route, e.g. "POST /v1/proxy-users". */
  byRoute: Record<string, number>;
  /** Peak VmHWM of the dynamic-provider process, MiB. */
  providerMb: number;
  /** Seconds from the start of the phase to its first and to its last API request. */
  firstRequest: number;
  lastRequest: number;
  /** Longest time between two requests the server saw: a wait for a window's reset shows here. */
  longestPause: number;
  /** The window the phase found: what was left of its budget and of its time. */
  window: WindowAtStart;
  /** 429s the crowding client met while it spent its share. */
  otherRateLimited: number;
}

/** Engine parallelism: `writes` for up, preview and destroy; `refresh` for refresh; absent: the CLI's default. */
export interface Parallel {
  writes?: number;
  refresh?: number;
}

export interface StackFigures {
  shape: StackShape;
  resources: number;
  parallel: Parallel;
  engineFloor: { up: number; refresh: number; destroy: number };
  /** Share of each phase's window another client of the key spent before the phase (0: none). */
  crowd: number;
  env: Record<string, string>;
  up: Measured;
  previewRequests: number;
  refresh: Measured;
  destroy: Measured;
  state: { bytesPerResource: number; providerChars: number; noopBytesPerResource: number; noopProviderChars: number };
  /** Peak VmHWM of the no-op provider's process during its up, MiB: what the provider host costs by itself. */
  noopProviderMb: number;
}

export interface StackOptions {
  /** Share of each phase's window another client of the key spends first (0: none). */
  crowd?: number;
  /** Environment of both the real and the no-op stack's CLI, e.g. PULUMI_SKIP_CHECKPOINTS. */
  env?: Record<string, string>;
}

export function describeParallel(parallel: Parallel): string {
  const value = (p: number | undefined) => (p === undefined ? "CLI default" : String(p));
  return parallel.writes === parallel.refresh
    ? value(parallel.writes)
    : `${value(parallel.writes)} (refresh ${value(parallel.refresh)})`;
}

function log(message: string): void {
  process.stdout.write(`  ${message}\n`);
}

function describe(m: Measured): string {
  const span = `requests from ${m.firstRequest.toFixed(1)} s to ${m.lastRequest.toFixed(1)} s, longest pause ${m.longestPause.toFixed(1)} s`;
  return `${m.seconds.toFixed(1)} s, ${m.requests} requests (${span}), ${m.rateLimited} 429s, provider ${m.providerMb} MiB ${JSON.stringify(m.byRoute)}`;
}

function summarize(stats: Stats): Pick<Measured, "requests" | "rateLimited" | "byRoute"> {
  return { requests: stats.requests, rateLimited: stats.rateLimited, byRoute: stats.byRoute };
}

/** Exported deployment size per resource, and the serialized provider one resource carries. */
async function stateFigures(
  stack: Stack,
  resources: number,
): Promise<{ bytesPerResource: number; providerChars: number }> {
  const deployment = (await stack.exportStack()).deployment as {
    resources?: { type: string; outputs?: Record<string, unknown> }[];
  };
  const bytes = Buffer.byteLength(JSON.stringify(deployment));
  const dynamic = deployment.resources?.find((resource) => typeof resource.outputs?.__provider === "string");
  return {
    bytesPerResource: Math.round(bytes / resources),
    providerChars: String(dynamic?.outputs?.__provider ?? "").length,
  };
}

async function engineFloor(
  binDir: string,
  installed: Installed,
  shape: StackShape,
  parallel: Parallel,
  env: Record<string, string>,
) {
  const harness = await createBenchStack(binDir, noopProgram(installed, shape), {}, env);
  try {
    const memory = new ProviderMemory();
    memory.start();
    const up = await timed(() => harness.stack.up({ parallel: parallel.writes }));
    const providerMb = memory.stop();
    const refresh = await timed(() => harness.stack.refresh({ parallel: parallel.refresh }));
    const state = await stateFigures(harness.stack, resourceCount(shape));
    const destroy = await timed(() => harness.stack.destroy({ parallel: parallel.writes }));
    return { floor: { up: up.seconds, refresh: refresh.seconds, destroy: destroy.seconds }, state, providerMb };
  } finally {
    await harness.cleanup();
  }
}

/** When the server saw requests: the server's log hook calls `seen` once per request. */
class RequestSpan {
  #started = 0;
  #first = NaN;
  #last = NaN;
  #longestPause = 0;

  start(): void {
    this.#started = performance.now();
    this.#first = this.#last = NaN;
    this.#longestPause = 0;
  }

  seen = (): void => {
    const at = (performance.now() - this.#started) / 1000;
    if (Number.isNaN(this.#first)) this.#first = at;
    else this.#longestPause = Math.max(this.#longestPause, at - this.#last);
    this.#last = at;
  };

  get figures() {
    return { firstRequest: this.#first, lastRequest: this.#last, longestPause: this.#longestPause };
  }
}

interface PhaseContext {
  server: ReferenceServer;
  clock: WindowClock;
  span: RequestSpan;
  crowd: number;
}

/**
 * Runs `work` as a measured phase: a fresh rate-limit window (crowded first, if asked), fresh stats,
 * provider memory sampled.
 */
async function phase({ server, clock, span, crowd }: PhaseContext, work: () => Promise<unknown>): Promise<Measured> {
  clock.openWindowOnNextRequest();
  let window = freshWindow(RATE_LIMIT_PER_MINUTE);
  let otherRateLimited = 0;
  if (crowd > 0) {
    const other = new ProxyClient({ baseUrl: server.url, apiKey: server.rootKey, maxConcurrency: 16 });
    const spent = Math.floor(RATE_LIMIT_PER_MINUTE * crowd);
    await Promise.all(Array.from({ length: spent }, () => other.billing.balance()));
    otherRateLimited = other.stats.rateLimited;
    window = {
      limit: RATE_LIMIT_PER_MINUTE,
      left: RATE_LIMIT_PER_MINUTE - spent,
      windowLeftMs: WINDOW_MS - (clock.now() % WINDOW_MS),
    };
  }
  server.resetStats();
  span.start();
  const memory = new ProviderMemory();
  memory.start();
  try {
    const { seconds } = await timed(work);
    return {
      seconds,
      ...summarize(server.stats()),
      providerMb: memory.stop(),
      ...span.figures,
      window,
      otherRateLimited,
    };
  } catch (error) {
    memory.stop();
    throw error;
  }
}

export async function benchStack(
  binDir: string,
  installed: Installed,
  shape: StackShape,
  parallel: Parallel,
  { crowd = 0, env = {} }: StackOptions = {},
): Promise<StackFigures> {
  const resources = resourceCount(shape);
  const envNote =
    Object.keys(env).length > 0
      ? `, ${Object.entries(env)
          .map(([k, v]) => `${k}=${v}`)
          .join(" ")}`
      : "";
  const crowded = crowd > 0 ? `, another client spends ${crowd * 100} % of each phase's window first` : "";
  log(`${shape.label}: ${resources} resources, parallel ${describeParallel(parallel)}${crowded}${envNote}`);
  const noop = await engineFloor(binDir, installed, shape, parallel, env);
  log(
    `engine floor (no-op provider): up ${noop.floor.up.toFixed(1)} s, refresh ${noop.floor.refresh.toFixed(1)} s, destroy ${noop.floor.destroy.toFixed(1)} s, provider ${noop.providerMb} MiB`,
  );

  const clock = new WindowClock();
  const span = new RequestSpan();
  const server = await startReferenceServer({
    rateLimitPerMinute: RATE_LIMIT_PER_MINUTE,
    clock,
    balanceCents: 100_000_000,
    log: span.seen,
  });
  const harness = await createBenchStack(
    binDir,
    realProgram(installed, shape),
    {
      "proxy:apiUrl": { value: server.url },
      "proxy:apiKey": { value: server.rootKey, secret: true },
    },
    env,
  );
  try {
    const { stack } = harness;
    const context = { server, clock, span, crowd };
    const up = await phase(context, async () => {
      const result = await stack.up({ parallel: parallel.writes });
      if (result.summary.resourceChanges?.create !== resources + 1)
        throw new Error(`up created ${JSON.stringify(result.summary.resourceChanges)}`);
    });
    log(`up       ${describe(up)}`);

    server.resetStats();
    const preview = await stack.preview({ parallel: parallel.writes });
    if (preview.changeSummary.same !== resources + 1)
      throw new Error(`preview planned ${JSON.stringify(preview.changeSummary)}`);
    const previewRequests = server.stats().requests;
    log(`preview  ${previewRequests} requests`);

    const refresh = await phase(context, async () => {
      const result = await stack.refresh({ parallel: parallel.refresh });
      const changes = result.summary.resourceChanges ?? {};
      if (Object.keys(changes).some((kind) => kind !== "same"))
        throw new Error(`refresh found drift: ${JSON.stringify(changes)}`);
    });
    log(`refresh  ${describe(refresh)}`);

    const state = await stateFigures(stack, resources);
    const destroy = await phase(context, () => stack.destroy({ parallel: parallel.writes }));
    const left = server.control.snapshot();
    if (left.proxyUsers.length + left.ips.length + left.keys.length !== 1)
      throw new Error("destroy left objects behind");
    log(`destroy  ${describe(destroy)}`);

    return {
      shape,
      resources,
      parallel,
      engineFloor: noop.floor,
      crowd,
      env,
      up,
      previewRequests,
      refresh,
      destroy,
      state: {
        ...state,
        noopBytesPerResource: noop.state.bytesPerResource,
        noopProviderChars: noop.state.providerChars,
      },
      noopProviderMb: noop.providerMb,
    };
  } finally {
    await harness.cleanup();
    await server.close();
  }
}
