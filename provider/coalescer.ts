import type { Page, RateLimitWindow } from "../sdk";
import { unlessGone } from "./shared";

/**
 * Coalesced reads. A refresh asks the provider process for every resource at once, and `create`
 * re-reads what it wrote; one GET each would spend the key's 600 requests a minute on reads. Reads
 * that wait together are instead answered from one walk of the collection's list (200 per page).
 *
 * Freshness: a read is only answered from a page requested after the read was, so a change made
 * before a refresh is always seen. Every read takes a ticket; a page answers only reads up to the
 * last ticket issued when its request went on the wire (the collection calls `onSend` at that moment,
 * through the SDK's per-request hook; without the call, when the page was asked for). An id that a complete walk did not show although every
 * page of it was requested after the read falls back to a GET (404: gone).
 *
 * Cost: lists are in creation order, so objects created since the last walk sit on its last page or
 * after it. A round first walks that tail (one page, which is all a `create` re-read needs), then,
 * for reads still open, the list from the start. Whenever GETs would cost no more than the pages
 * still to walk, judged by the last complete walk, the open reads are answered by GETs instead, so a
 * read of one resource in a large account stays one request.
 */

interface Waiter<T> {
  readonly id: string;
  readonly ticket: number;
  resolve(value: T | undefined): void;
  reject(reason: unknown): void;
}

export interface Collection<T> {
  /** One list page; `onSend` must be called whenever its request goes on the wire (again, on a retry). */
  page(cursor: string | undefined, onSend: () => void): Promise<Page<T>>;
  get(id: string): Promise<T>;
}

export interface CoalescerOptions {
  /** A round starts once no read has arrived for this long, so a burst is gathered into one walk. */
  quietMs?: number;
  /** …but never later than this after it began gathering. */
  maxGatherMs?: number;
  /**
   * True while requests are scarce (the key's budget is being spent faster than its window passes).
   * Rounds then gather longer (`savingQuietMs`, `savingMaxGatherMs`): at low engine parallelism the
   * re-reads of creates arrive one by one, and a page for each would spend the budget twice as fast
   * as the creates themselves.
   */
  saving?: () => boolean;
  savingQuietMs?: number;
  savingMaxGatherMs?: number;
}

/** Reads waiting for a walk, by id. */
class OpenReads<T extends { id: string }> {
  readonly #byId = new Map<string, Waiter<T>[]>();

  get size(): number {
    return this.#byId.size;
  }

  join(waiters: Iterable<Waiter<T>>): void {
    for (const waiter of waiters) this.#byId.set(waiter.id, [...(this.#byId.get(waiter.id) ?? []), waiter]);
  }

  /** Answers the reads of the page's items requested up to `mark`. */
  answer(items: readonly T[], mark: number): void {
    for (const item of items) {
      const waiting = this.#byId.get(item.id);
      if (!waiting) continue;
      for (const waiter of waiting) if (waiter.ticket <= mark) waiter.resolve(item);
      const later = waiting.filter((waiter) => waiter.ticket > mark);
      if (later.length > 0) this.#byId.set(item.id, later);
      else this.#byId.delete(item.id);
    }
  }

  /** Removes and returns the reads requested after `mark`. */
  takeLaterThan(mark: number): Waiter<T>[] {
    const later: Waiter<T>[] = [];
    for (const [id, waiting] of this.#byId) {
      later.push(...waiting.filter((waiter) => waiter.ticket > mark));
      const seen = waiting.filter((waiter) => waiter.ticket <= mark);
      if (seen.length > 0) this.#byId.set(id, seen);
      else this.#byId.delete(id);
    }
    return later;
  }

  take(): Waiter<T>[] {
    const all = [...this.#byId.values()].flat();
    this.#byId.clear();
    return all;
  }
}

type Pass = { complete: true; firstMark: number } | { complete: false };

export class ReadCoalescer<T extends { id: string }> {
  /** What reads cost this process, for diagnostics and tests. */
  readonly stats = { reads: 0, pages: 0, gets: 0 };
  readonly #collection: Collection<T>;
  readonly #quietMs: number;
  readonly #maxGatherMs: number;
  readonly #saving: () => boolean;
  readonly #savingQuietMs: number;
  readonly #savingMaxGatherMs: number;
  #queue: Waiter<T>[] = [];
  #lastTicket = 0;
  #draining = false;
  /** Pages of the last complete walk from the start; unknown until one completed. */
  #pagesPerWalk: number | undefined;
  /** The cursor the last page was fetched with; undefined while the list fits one page. */
  #tailCursor: string | undefined;
  /** Last ticket issued before the current page request was sent. */
  #pageMark = 0;

  constructor(collection: Collection<T>, options: CoalescerOptions = {}) {
    this.#collection = collection;
    this.#quietMs = options.quietMs ?? 20;
    this.#maxGatherMs = options.maxGatherMs ?? 200;
    this.#saving = options.saving ?? (() => false);
    this.#savingQuietMs = options.savingQuietMs ?? 100;
    this.#savingMaxGatherMs = options.savingMaxGatherMs ?? 1_000;
  }

  /** The object as the API has it now, or undefined when it does not exist. */
  read(id: string): Promise<T | undefined> {
    this.stats.reads += 1;
    return new Promise<T | undefined>((resolve, reject) => {
      this.#queue.push({ id, ticket: ++this.#lastTicket, resolve, reject });
      if (!this.#draining) {
        this.#draining = true;
        void this.#drain();
      }
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        await this.#gather();
        await this.#round(this.#queue.splice(0));
      }
    } finally {
      this.#draining = false;
    }
  }

  async #gather(): Promise<void> {
    const started = Date.now();
    for (;;) {
      const seen = this.#lastTicket;
      const saving = this.#saving();
      await sleep(saving ? this.#savingQuietMs : this.#quietMs);
      const maxGatherMs = saving ? this.#savingMaxGatherMs : this.#maxGatherMs;
      if (seen === this.#lastTicket || Date.now() - started >= maxGatherMs) return;
    }
  }

  async #round(batch: Waiter<T>[]): Promise<void> {
    const open = new OpenReads<T>();
    open.join(batch);
    try {
      // A page costs what a GET does, and while it waits its turn behind other requests it collects
      // every read that arrives before it goes out; so only a lone read, with nothing known of the
      // list, is a GET from the start.
      if (this.#tailCursor !== undefined) await this.#pass(open, this.#tailCursor);
      if (open.size === 0) return;
      if (open.size < (this.#pagesPerWalk ?? 2)) return await this.#getEach(open.take());
      const pass = await this.#pass(open, undefined);
      const left = open.take();
      if (!pass.complete) return await this.#getEach(left);
      // Reads that joined during the walk may sit on a page fetched before them: the next round takes them.
      this.#queue.unshift(...left.filter((waiter) => waiter.ticket > pass.firstMark));
      await this.#getEach(left.filter((waiter) => waiter.ticket <= pass.firstMark));
    } catch {
      // A failed page: walking is only an optimisation, so each read makes (and reports) its own GET.
      // The tail cursor may be what failed (one the API no longer honours): start over from the top.
      this.#tailCursor = undefined;
      await this.#getEach(open.take());
    }
  }

  /** Walks from `from` to the end of the list, or until walking costs more than GETs would. */
  async #pass(open: OpenReads<T>, from: string | undefined): Promise<Pass> {
    let cursor = from;
    let pages = 0;
    let firstMark = 0;
    for (;;) {
      this.#pageMark = this.#lastTicket;
      this.stats.pages += 1;
      // Each time the request goes out (again, on a retry, whose answer is the one used) it can answer
      // every read requested so far. Pages are fetched one at a time, so there is no doubt which.
      const page = await this.#collection.page(cursor, () => {
        this.#pageMark = this.#lastTicket;
      });
      const mark = this.#pageMark;
      if (pages === 0) firstMark = mark;
      pages += 1;
      // Reads that arrived meanwhile ride along: this page answers those requested before it was sent,
      // the pages still to come all of them.
      open.join(this.#queue.splice(0));
      open.answer(page.items, mark);
      if (page.nextCursor === null) {
        // Reads this last page did not see go back to the queue: the next round starts at the tail for them.
        this.#queue.unshift(...open.takeLaterThan(mark));
        this.#tailCursor = cursor;
        if (from === undefined) this.#pagesPerWalk = pages;
        return { complete: from === undefined, firstMark };
      }
      if (open.size === 0) return { complete: false };
      // A tail that grew by more than a page is walked to its end: what create re-reads is there, and
      // only a walk to the end moves the tail cursor on (stopping would leave every later round paying
      // for the same stale page and a GET on top).
      if (from === undefined) {
        // With no complete walk yet, assume as many pages are left as were read: a pass then costs
        // at most twice the GETs it replaces.
        const pagesLeft = this.#pagesPerWalk !== undefined ? this.#pagesPerWalk - pages : pages;
        if (pagesLeft >= open.size) return { complete: false };
      }
      cursor = page.nextCursor;
    }
  }

  async #getEach(waiters: Waiter<T>[]): Promise<void> {
    await Promise.all(
      waiters.map(async (waiter) => {
        this.stats.gets += 1;
        try {
          waiter.resolve(await unlessGone(() => this.#collection.get(waiter.id)));
        } catch (error) {
          waiter.reject(error);
        }
      }),
    );
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The API's rate-limit windows are fixed minutes. */
const WINDOW_MS = 60_000;
/** Spending ahead of an even schedule by more than this share of the budget is worth saving requests… */
const AHEAD_SLACK = 0.1;
/** …once at least this share of it is gone: most stacks fit in half a window, and gathering costs them time. */
const SPENT_BEFORE_SAVING = 0.5;

/**
 * True when the key's budget is being spent faster than the window passes: at this pace it runs out
 * before the reset, and every request saved now is a wait saved later. A page costs as much as the
 * write it follows, so that is when reads should gather longer. Gathering delays every create a
 * little, so it waits until half the budget is gone: a stack that fits in the rest never pays it.
 */
export function spendingAhead(window: RateLimitWindow | undefined, now: number): boolean {
  if (!window?.limit) return false;
  const elapsed = 1 - Math.min(WINDOW_MS, Math.max(0, window.endsAt - now)) / WINDOW_MS;
  const spent = 1 - window.remaining / window.limit;
  return spent >= SPENT_BEFORE_SAVING && spent > elapsed + AHEAD_SLACK;
}
