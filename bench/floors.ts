/**
 * The window floor: the earliest moment the last unavoidable request of a phase can be sent under a
 * fixed-window limit, given the budget the phase finds when it starts.
 *
 * The windows are fixed, so a budget is spent as fast as the server takes it and the only forced
 * waits are the resets: R requests that find `left` requests and `windowLeftMs` in the current window
 * need no wait when R ≤ left, else the rest of this window plus one whole window for every further
 * `limit` requests beyond the first. In a fresh window (left = limit, 60 s left) that is
 * 60 s × (⌈R / limit⌉ − 1).
 */
export interface WindowAtStart {
  limit: number;
  /** Requests left in the current window when the phase starts. */
  left: number;
  /** Milliseconds until the current window ends. */
  windowLeftMs: number;
}

export const WINDOW_MS = 60_000;

export function freshWindow(limit: number): WindowAtStart {
  return { limit, left: limit, windowLeftMs: WINDOW_MS };
}

export function windowFloorSeconds(requests: number, at: WindowAtStart): number {
  if (requests <= at.left) return 0;
  const laterWindows = Math.ceil((requests - at.left) / at.limit) - 1;
  return (at.windowLeftMs + laterWindows * WINDOW_MS) / 1000;
}

/** Resources by collection; the lists answer 200 a page. */
export interface Collections {
  users: number;
  keys: number;
  ips: number;
}

const PAGE = 200;

function pages(c: Collections): number {
  return [c.users, c.keys, c.ips].reduce((sum, n) => sum + Math.ceil(n / PAGE), 0);
}

/**
 * Requests no provider can avoid: a create is one POST (its fresh answer is the object as created);
 * a refresh is one walk of each list; a destroy is one DELETE per resource (the API has no bulk
 * delete).
 */
export function unavoidableRequests(phase: "up" | "refresh" | "destroy", c: Collections): number {
  if (phase === "refresh") return pages(c);
  return c.users + c.keys + c.ips;
}

/** The refresh goal of issue 12: at most ⌈n / 200⌉ + 1 requests per collection. */
export function refreshGoal(c: Collections): number {
  return pages(c) + [c.users, c.keys, c.ips].filter((n) => n > 0).length;
}
