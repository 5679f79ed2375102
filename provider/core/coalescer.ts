import { LIST_LIMIT_MAX } from "../../contract/common";
import { ApiError, ConnectionError, type Page, type PagePromise, type RequestOptions, TimeoutError } from "../../sdk";
import { isRetriableStatus } from "../../sdk/core/retry";
import { unlessGone } from "./errors";
import { OpenReads, type Waiter } from "./openReads";

/**
 * Coalesced reads. A refresh asks the provider process for every resource, and `create` re-reads
 * what a replayed answer describes (a fresh answer needs no read: see exactlyOnce.ts); one GET each
 * would spend the key's 600 requests a minute on reads. Reads are instead answered from walks of the
 * collection's list (200 per page), and from what those walks showed.
 *
 * Freshness: a read reflects every write this provider process made before it, and everything
 * anyone did before the operation began. A read's ticket is the number of writes the process had
 * finished when the read arrived (the client counts them, `writesDone`). A page's mark is that count
 * when the page went on the wire (the collection calls `onSend` then, through the SDK's per-request
 * hook). A page answers every read whose ticket is at most its mark, and what it showed is
 * remembered with that mark, so a later read whose ticket is at most the mark is answered with no
 * request. With no writes (a refresh) the first walk therefore answers every read of the operation;
 * a create's re-read waits for a page sent after its create finished. A change another client makes
 * during the operation may go unseen, as it would had the read come first. An id that a complete
 * walk, every page marked at least the read's ticket, did not show falls back to a GET (404: gone).
 *
 * Cost: lists are in creation order, so objects created since the last walk sit on its last page or
 * after it. A round first walks that tail (one page, which is all a `create` re-read needs), then,
 * for reads still open, the list from the start, going on where the last walk stopped. Whenever GETs
 * would cost no more than the pages still to walk, judged by the last complete walk, and the pages
 * walked so far have not answered as many reads as they cost, the open reads are answered by GETs
 * instead, so a read of one resource in a large account stays one request.
 */
export interface Collection<T> {
  /** One list page; `onSend` must be called whenever its request goes on the wire (again, on a retry). */
  page(cursor: string | undefined, onSend: () => void): Promise<Page<T>>;
  get(id: string): Promise<T>;
}

/** A collection of the SDK (`client.keys`), walked with full pages. */
export function walkable<T>(resource: {
  list(query: { limit: number; cursor?: string }, options: RequestOptions): PagePromise<T>;
  get(id: string): Promise<T>;
}): Collection<T> {
  return {
    page: (cursor, onSend) => resource.list({ limit: LIST_LIMIT_MAX, cursor }, { onSend }),
    get: (id) => resource.get(id),
  };
}

export interface CoalescerOptions {
  /** A round starts once no read has arrived for this long, so a burst is gathered into one walk. */
  quietMs?: number;
  /** …but never later than this after it began gathering. */
  maxGatherMs?: number;
}

type Pass = { complete: true; firstMark: number } | { complete: false };

export class ReadCoalescer<T extends { id: string }> {
  /** What reads cost this process, for diagnostics and tests; `remembered` reads cost nothing. */
  readonly stats = { reads: 0, remembered: 0, pages: 0, gets: 0 };
  readonly #collection: Collection<T>;
  readonly #writesDone: () => number;
  readonly #quietMs: number;
  readonly #maxGatherMs: number;
  #queue: Waiter<T>[] = [];
  #arrivals = 0;
  #draining = false;
  /** Each object as a page or GET last showed it, with the write count that answer reflects. */
  readonly #seen = new Map<string, { item: T; mark: number }>();
  /** Reads answered by pages or from what they showed, against `stats.pages`: whether walking pays. */
  #answeredFromList = 0;
  /** Pages of the last complete walk from the start; unknown until one completed. */
  #pagesPerWalk: number | undefined;
  /** First mark of the last complete walk from the start: reads up to it that it did not show are GETs. */
  #walkedAt = -1;
  /** A walk from the start that stopped before the end: where it goes on. */
  #walk: { cursor: string; pages: number; firstMark: number } | undefined;
  /** The cursor the last page was fetched with; undefined while the list fits one page. */
  #tailCursor: string | undefined;
  /** Writes done when the current page request was sent. */
  #pageMark = 0;

  /** `writesDone`: how many writes this process has finished so far, never decreasing. */
  constructor(collection: Collection<T>, writesDone: () => number, options: CoalescerOptions = {}) {
    this.#collection = collection;
    this.#writesDone = writesDone;
    this.#quietMs = options.quietMs ?? 20;
    this.#maxGatherMs = options.maxGatherMs ?? 200;
  }

  /** The object as the API has it, reflecting every write before this call, or undefined when it does not exist. */
  read(id: string): Promise<T | undefined> {
    this.stats.reads += 1;
    const ticket = this.#writesDone();
    const seen = this.#seen.get(id);
    if (seen && seen.mark >= ticket) {
      this.stats.remembered += 1;
      this.#answeredFromList += 1;
      return Promise.resolve(seen.item);
    }
    return new Promise<T | undefined>((resolve, reject) => {
      this.#queue.push({ id, ticket, resolve, reject });
      this.#arrivals += 1;
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
      const seen = this.#arrivals;
      await sleep(this.#quietMs);
      if (seen === this.#arrivals || Date.now() - started >= this.#maxGatherMs) return;
    }
  }

  async #round(batch: Waiter<T>[]): Promise<void> {
    const open = new OpenReads<T>();
    open.join(batch);
    // A complete walk sent after these reads' writes did not show them: only a GET can tell.
    const unseen = this.#getEach(open.take("upTo", this.#walkedAt));
    try {
      // A page costs what a GET does, and while it waits its turn behind other requests it collects
      // every read that arrives before it goes out; so only a lone read, with nothing known of the
      // list, is a GET from the start.
      if (open.size > 0 && this.#tailCursor !== undefined) await this.#pass(open, "tail");
      if (open.size === 0) return;
      const walked = this.#walk?.pages;
      if (walked === undefined ? open.size < (this.#pagesPerWalk ?? 2) : !this.#worthWalking(open.size, walked)) {
        return await this.#getEach(open.takeAll());
      }
      const pass = await this.#pass(open, "walk");
      const left = open.takeAll();
      if (!pass.complete) return await this.#getEach(left);
      // Reads whose writes came after the walk's first page need a newer walk: the next round takes them.
      this.#queue.unshift(...left.filter((waiter) => waiter.ticket > pass.firstMark));
      await this.#getEach(left.filter((waiter) => waiter.ticket <= pass.firstMark));
    } catch (error) {
      this.#tailCursor = undefined;
      this.#walk = undefined;
      // The page's call gave up only after its whole retry window: a GET per read would wait that long
      // again, against the same API, for the same answer.
      if (unavailable(error)) for (const waiter of open.takeAll()) waiter.reject(error);
      // A page refused (a cursor the API no longer honours, or a malformed item): walking is only an
      // optimisation, so each read makes (and reports) its own GET, and the next walk starts from the top.
      else await this.#getEach(open.takeAll());
    } finally {
      await unseen;
    }
  }

  /** Walking on pays when GETs for the open reads cost more, or the pages walked answered as many reads as they cost. */
  #worthWalking(openReads: number, pagesWalked: number): boolean {
    // With no complete walk yet, assume as many pages are left as were read.
    const pagesLeft = this.#pagesPerWalk !== undefined ? this.#pagesPerWalk - pagesWalked : pagesWalked;
    return pagesLeft < openReads || this.#answeredFromList >= this.stats.pages;
  }

  /** Walks the tail, or the list from the start (or where that walk stopped), to the end or until walking stops paying. */
  async #pass(open: OpenReads<T>, from: "tail" | "walk"): Promise<Pass> {
    let cursor = from === "tail" ? this.#tailCursor : this.#walk?.cursor;
    let pages = from === "walk" ? (this.#walk?.pages ?? 0) : 0;
    let firstMark = from === "walk" ? this.#walk?.firstMark : undefined;
    for (;;) {
      this.#pageMark = this.#writesDone();
      this.stats.pages += 1;
      // Each time the request goes out (again, on a retry, whose answer is the one used) it reflects
      // every write finished so far. Pages are fetched one at a time, so there is no doubt which.
      const page = await this.#collection.page(cursor, () => {
        this.#pageMark = this.#writesDone();
      });
      const mark = this.#pageMark;
      firstMark ??= mark;
      pages += 1;
      for (const item of page.items) this.#remember(item, mark);
      // Reads that arrived meanwhile ride along when no write of theirs came after the page was sent.
      open.join(this.#queue.splice(0));
      this.#answeredFromList += open.answer(page.items, mark);
      if (page.nextCursor === null) {
        // Reads this last page did not see go back to the queue: the next round starts at the tail for them.
        this.#queue.unshift(...open.take("later", mark));
        this.#tailCursor = cursor;
        if (from === "tail") return { complete: false };
        this.#pagesPerWalk = pages;
        this.#walkedAt = firstMark;
        this.#walk = undefined;
        return { complete: true, firstMark };
      }
      if (from === "walk") this.#walk = { cursor: page.nextCursor, pages, firstMark };
      if (open.size === 0) return { complete: false };
      // A tail that grew by more than a page is walked to its end: what create re-reads is there, and
      // only a walk to the end moves the tail cursor on (stopping would leave every later round paying
      // for the same stale page and a GET on top).
      if (from === "walk" && !this.#worthWalking(open.size, pages)) return { complete: false };
      cursor = page.nextCursor;
    }
  }

  #remember(item: T, mark: number): void {
    const known = this.#seen.get(item.id);
    if (!known || known.mark <= mark) this.#seen.set(item.id, { item, mark });
  }

  async #getEach(waiters: Waiter<T>[]): Promise<void> {
    await Promise.all(
      waiters.map(async (waiter) => {
        this.stats.gets += 1;
        try {
          const mark = this.#writesDone();
          const found = await unlessGone(() => this.#collection.get(waiter.id));
          if (found) this.#remember(found, mark);
          else this.#seen.delete(waiter.id);
          waiter.resolve(found);
        } catch (error) {
          waiter.reject(error);
        }
      }),
    );
  }
}

/** No answer, or only answers the SDK retries (5xx, 429), for as long as it retried. */
function unavailable(error: unknown): boolean {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
  return error instanceof ApiError && isRetriableStatus(error.status);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
