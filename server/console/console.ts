import type { IncomingMessage, ServerResponse } from "node:http";
import { ConsoleAccess } from "./access";
import { ConsoleHub, type ConsoleSources } from "./hub";
import { CONSOLE_CSP, CONSOLE_HTML } from "./page";
import { CONSOLE_SCRIPT } from "./script";

/** Paths the console answers; every other one is the API's, unchanged. */
const PAGE = "/";
const SCRIPT = "/console/app.js";
const EVENTS = "/console/events";

export interface ServerConsole {
  readonly hub: ConsoleHub;
  /** Answers the console's own paths and says so; any other request is left to the API. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  close(): void;
}

function refuse(res: ServerResponse, status: number, reason: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
  res.end(`${reason}\n`);
}

/**
 * The reference server's live console, at `/` of the management port beside the API's `/v1` routes:
 * objects, requests, rate-limit windows, gateway traffic and faults, read-only.
 */
export function createConsole(sources: ConsoleSources): ServerConsole {
  const access = new ConsoleAccess();
  const hub = new ConsoleHub(sources);
  return {
    hub,
    handle(req, res) {
      const path = (req.url ?? "/").split("?")[0];
      if (path !== PAGE && path !== SCRIPT && path !== EVENTS) return false;
      if (req.method !== "GET" && !(req.method === "HEAD" && path !== EVENTS)) {
        refuse(res, 405, "the console is read-only");
        return true;
      }
      const refusal = access.refusal(req, path === EVENTS);
      if (refusal !== undefined) {
        refuse(res, 403, refusal);
        return true;
      }
      const common = {
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
      };
      if (path === PAGE) {
        res.writeHead(200, {
          ...common,
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": CONSOLE_CSP,
          "x-frame-options": "DENY",
          "set-cookie": access.cookie(),
        });
        res.end(CONSOLE_HTML);
      } else if (path === SCRIPT) {
        res.writeHead(200, { ...common, "content-type": "text/javascript; charset=utf-8" });
        res.end(CONSOLE_SCRIPT);
      } else {
        hub.subscribe(res);
      }
      return true;
    },
    close: () => hub.close(),
  };
}
