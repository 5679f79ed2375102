import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SecretPattern } from "../contract/common";
import { SCOPES } from "../contract/keys";
import { ReferenceApp, type Stats } from "./app";
import { type Clock, systemClock } from "./clock";
import { isLoopbackHost } from "./console/access";
import { createConsole, type ServerConsole } from "./console/console";
import type { ConsoleStats } from "./console/hub";
import { createControl, type ServerControl } from "./control";
import { FaultInjector, type FaultOptions, type InjectedFault } from "./faults";
import { type Gateway, type GatewayOptions, startGateway } from "./gateway/gateway";
import { createKey } from "./handlers/keys";
import { HeldReplies } from "./holds";
import { loadStore, type Store, saveStore } from "./store";
import { newSecret, secretHint, sha256Hex } from "./tokens";

export interface ReferenceServerOptions {
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 0: an ephemeral port. */
  port?: number;
  /** Secret of the root key (all seven scopes), `live_<at least 32 base62>`; generated when absent. */
  rootKey?: string;
  /** Default 600, per API key and fixed 60-second window. */
  rateLimitPerMinute?: number;
  /** Failed authentications (401) per client address and minute; past it the address gets 429. Default 100. */
  failedAuthPerMinute?: number;
  /** A request's headers must be in within this long, or the connection closes; default 10 000 ms, as the gateway's. */
  headerTimeoutMs?: number;
  /** Starting balance in cents, default 10 000; a state file that already holds a balance wins. */
  balanceCents?: number;
  /** Default: the system clock. */
  clock?: Clock;
  /** Random faults; default none. */
  faults?: FaultOptions;
  /** JSON file the state survives restarts in. Holds secret hashes only, never a secret. */
  stateFile?: string;
  /** One line per request: request id, method, path, outcome, duration, key id. Never a secret. */
  log?: (line: string) => void;
  /** The proxy gateway beside the API: its port, propagation delay, rate limit and allowed hosts. */
  gateway?: GatewayOptions;
  /**
   * The live console at `/` of the API's port (default on). It only ever serves a loopback host, so
   * a server listening elsewhere has none.
   */
  console?: boolean;
}

export interface ReferenceServer {
  readonly url: string;
  /** The proxy gateway: `proxy-authorization: Basic base64(username:password)` of a proxy user. */
  readonly gatewayUrl: string;
  readonly rootKey: string;
  /** The live console's page, when it is on (a loopback host, and `console` not false). */
  readonly consoleUrl: string | undefined;
  /** The console's open event streams and what they hold, when it is on. */
  consoleStats(): ConsoleStats | undefined;
  readonly clock: Clock;
  /**
   * The next `count` (default 1) matching requests fail. Phase "after": the state changes, then the
   * reply is lost. Kind "hold": the state changes, then the reply waits for `releaseHeldReplies`.
   */
  injectFault(fault: InjectedFault): void;
  /** Resolves with the held requests ("POST /v1/keys", …) once at least `count` replies are held. */
  waitForHeldReplies(count: number, timeoutMs?: number): Promise<string[]>;
  /** The requests whose replies are held now. */
  heldReplies(): string[];
  /** Sends every held reply (a killed client never reads it); returns how many. */
  releaseHeldReplies(): number;
  setFaults(faults: FaultOptions): void;
  setRateLimit(perMinute: number): void;
  /** The gateway's knobs, changeable while it runs. */
  gateway: Pick<Gateway, "setPropagationDelay" | "setRateLimit" | "measuredStalls">;
  stats(): Stats;
  resetStats(): void;
  /** Out-of-band controls for tests and the demo; not HTTP endpoints. */
  control: ServerControl;
  close(): Promise<void>;
}

/** The root key keeps its id across restarts but gets the secret this start was given (or a fresh one). */
function installRootKey(store: Store, secret: string, now: number): void {
  const hash = sha256Hex(secret);
  const root = [...store.keys.values()].find((key) => key.root);
  const holder = store.keyIdForSecretHash(hash);
  if (holder !== undefined && holder !== root?.id)
    throw new Error("rootKey is already the secret of another key in the state file");
  if (!root) {
    createKey(store, now, { name: "root", scopes: [...SCOPES], expiresAt: null, root: true, secret });
    return;
  }
  root.scopes = [...SCOPES];
  root.expiresAt = null;
  store.setKeySecrets(root, { hash, hint: secretHint(secret) }, null);
}

export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  const clock = options.clock ?? systemClock;
  const rootKey = options.rootKey ?? newSecret();
  if (!SecretPattern.test(rootKey)) throw new TypeError("rootKey must look like live_<at least 32 base62 characters>");
  const balanceCents = options.balanceCents ?? 10_000;
  if (!Number.isSafeInteger(balanceCents)) throw new RangeError("balanceCents must be an integer");

  const { stateFile, log } = options;
  const store = loadStore(stateFile, balanceCents);
  installRootKey(store, rootKey, clock.now());

  let saveTimer: NodeJS.Timeout | undefined;
  const saveNow = (): void => {
    if (saveTimer) clearTimeout(saveTimer);
    saveTimer = undefined;
    if (stateFile === undefined) return;
    try {
      saveStore(stateFile, store);
    } catch (error) {
      (log ?? console.error)(
        `could not save the state file: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
  let liveConsole: ServerConsole | undefined;
  // Batched: a burst of writes costs one file write, not one per request.
  const saveSoon = (): void => {
    if (stateFile !== undefined && saveTimer === undefined) saveTimer = setTimeout(saveNow, 25).unref();
  };
  // The console learns which objects changed from the store itself (Store.listObservers).
  const onCommit = saveSoon;
  saveNow();

  const faults = new FaultInjector(options.faults);
  const holds = new HeldReplies();
  const app = new ReferenceApp({
    holds,
    store,
    clock,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 600,
    failedAuthPerMinute: options.failedAuthPerMinute ?? 100,
    faults,
    log,
    onCommit,
  });
  const headerTimeoutMs = options.headerTimeoutMs ?? 10_000;
  if (!Number.isSafeInteger(headerTimeoutMs) || headerTimeoutMs < 1)
    throw new RangeError(`headerTimeoutMs must be a positive integer of milliseconds, got ${headerTimeoutMs}`);
  const timeouts = {
    keepAliveTimeout: 10_000,
    // Node answers 408 and closes a connection whose headers are not in by then, a silent one too;
    // it looks every `connectionsCheckingInterval` (30 s by default: 600 slow connections lasted 71 s).
    headersTimeout: headerTimeoutMs,
    requestTimeout: Math.max(300_000, headerTimeoutMs),
    connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(headerTimeoutMs / 4))),
  };
  const server: Server = createServer(timeouts, (req, res) => {
    if (liveConsole?.handle(req, res)) return;
    // The pipeline answers its own errors; this only catches a failure to write the answer at all.
    app.handle(req, res).catch((error: unknown) => {
      (log ?? console.error)(
        `could not answer ${req.method ?? "?"} request: ${error instanceof Error ? error.message : String(error)}`,
      );
      res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let gateway: Gateway;
  try {
    gateway = await startGateway(options.gateway ?? {}, {
      store,
      clock,
      host: options.host ?? "127.0.0.1",
      log,
      // Metering changes no object the console lists; its traffic panel reads the store every second.
      onCommit: saveSoon,
    });
  } catch (error) {
    server.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const control = createControl(store, clock, onCommit);
  const url = `http://${host}:${address.port}`;
  if (options.console !== false && isLoopbackHost(host)) {
    liveConsole = createConsole({
      store,
      clock,
      limiter: app.limiter,
      faults,
      control,
      urls: { api: url, gateway: gateway.url },
    });
    app.requestLog.observer = liveConsole.hub.onRequest;
  }

  return {
    url,
    gatewayUrl: gateway.url,
    rootKey,
    consoleUrl: liveConsole ? `${url}/` : undefined,
    consoleStats: () => liveConsole?.hub.stats(),
    clock,
    injectFault: (fault) => faults.inject(fault),
    waitForHeldReplies: (count, timeoutMs = 60_000) => holds.waitFor(count, timeoutMs),
    heldReplies: () => holds.labels,
    releaseHeldReplies: () => holds.releaseAll(),
    setFaults: (next) => faults.setOptions(next),
    setRateLimit: (perMinute) => app.limiter.setLimit(perMinute),
    gateway: {
      setPropagationDelay: gateway.setPropagationDelay,
      setRateLimit: gateway.setRateLimit,
      measuredStalls: gateway.measuredStalls,
    },
    stats: () => structuredClone(app.stats),
    resetStats: () => {
      app.stats = ReferenceApp.emptyStats();
    },
    control,
    close: () =>
      (closing ??= Promise.all([
        liveConsole?.close(),
        gateway.close(),
        new Promise<void>((resolve) => {
          holds.releaseAll();
          server.close(() => resolve());
          server.closeAllConnections();
        }),
      ]).then(saveNow)),
  };
}
