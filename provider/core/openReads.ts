/** A read waiting for an answer; its ticket is the number of writes finished when it arrived. */
export interface Waiter<T> {
  readonly id: string;
  readonly ticket: number;
  resolve(value: T | undefined): void;
  reject(reason: unknown): void;
}

/** Reads waiting for a walk, by id. */
export class OpenReads<T extends { id: string }> {
  readonly #byId = new Map<string, Waiter<T>[]>();

  get size(): number {
    return this.#byId.size;
  }

  join(waiters: Iterable<Waiter<T>>): void {
    for (const waiter of waiters) this.#byId.set(waiter.id, [...(this.#byId.get(waiter.id) ?? []), waiter]);
  }

  /** Answers the reads of the page's items with tickets up to `mark`; returns how many. */
  answer(items: readonly T[], mark: number): number {
    let answered = 0;
    for (const item of items) {
      const waiting = this.#byId.get(item.id);
      if (!waiting) continue;
      for (const waiter of waiting) if (waiter.ticket <= mark) waiter.resolve(item);
      const later = waiting.filter((waiter) => waiter.ticket > mark);
      answered += waiting.length - later.length;
      if (later.length > 0) this.#byId.set(item.id, later);
      else this.#byId.delete(item.id);
    }
    return answered;
  }

  /** Removes and returns the reads with tickets after `mark` (`later`) or up to it. */
  take(which: "later" | "upTo", mark: number): Waiter<T>[] {
    const taken: Waiter<T>[] = [];
    for (const [id, waiting] of this.#byId) {
      const kept = waiting.filter((waiter) => (which === "later" ? waiter.ticket <= mark : waiter.ticket > mark));
      taken.push(...waiting.filter((waiter) => !kept.includes(waiter)));
      if (kept.length > 0) this.#byId.set(id, kept);
      else this.#byId.delete(id);
    }
    return taken;
  }

  takeAll(): Waiter<T>[] {
    const all = [...this.#byId.values()].flat();
    this.#byId.clear();
    return all;
  }
}
