import { ResponseValidationError } from "./errors";

/** One page of a list answer. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type PageFetcher<T> = (cursor: string | undefined) => Promise<Page<T>>;

/**
 * What every `list` returns. Awaiting it gives the first page; `for await` walks every item of
 * every page, following `next_cursor`. Nothing is sent until it is awaited or iterated, so a list
 * call that is built and dropped cannot fail unnoticed.
 */
export class PagePromise<T> implements Promise<Page<T>>, AsyncIterable<T> {
  readonly [Symbol.toStringTag] = "PagePromise";
  readonly #fetch: PageFetcher<T>;
  readonly #startCursor: string | undefined;
  #first: Promise<Page<T>> | undefined;

  constructor(fetch: PageFetcher<T>, startCursor?: string) {
    this.#fetch = fetch;
    this.#startCursor = startCursor;
  }

  #firstPage(): Promise<Page<T>> {
    this.#first ??= this.#fetch(this.#startCursor);
    return this.#first;
  }

  // biome-ignore lint/suspicious/noThenProperty: a PagePromise is awaited for its first page, so it must be a thenable.
  then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((value: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#firstPage().then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.#firstPage().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#firstPage().finally(onfinally);
  }

  /** Every page in turn, starting with the one `await` would give. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let page = await this.#firstPage();
    for (;;) {
      yield page;
      const cursor = page.nextCursor;
      if (cursor === null) return;
      page = await this.#fetch(cursor);
      // A server that hands back the cursor it was given would keep us here forever.
      if (page.nextCursor === cursor) throw new ResponseValidationError(`list cursor did not advance (${cursor})`, []);
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Every item of every page, collected. Meant for small lists. */
  async all(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }
}
