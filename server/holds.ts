/**
 * Replies parked after their state change committed (an injected fault of kind "hold"). The server
 * keeps them until a test releases them, so the test knows exactly which writes are in flight when it
 * kills a client: the write happened, and the client has not heard about it.
 */
export class HeldReplies {
  readonly #parked: { label: string; release: () => void }[] = [];
  readonly #waiters: { count: number; wake: () => void }[] = [];

  /** "POST /v1/keys" for each reply held now, oldest first. */
  get labels(): string[] {
    return this.#parked.map((parked) => parked.label);
  }

  /** Resolves when the reply is released. */
  park(label: string): Promise<void> {
    return new Promise((resolve) => {
      this.#parked.push({ label, release: resolve });
      for (const waiter of this.#waiters.filter((w) => this.#parked.length >= w.count)) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.wake();
      }
    });
  }

  /** Resolves with the held labels once at least `count` replies are held; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs: number): Promise<string[]> {
    if (this.#parked.length >= count) return Promise.resolve(this.labels);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(
          new Error(`${this.#parked.length} of ${count} replies held after ${timeoutMs} ms: ${this.labels.join(", ")}`),
        );
      }, timeoutMs);
      const waiter = {
        count,
        wake: () => {
          clearTimeout(timer);
          resolve(this.labels);
        },
      };
      this.#waiters.push(waiter);
    });
  }

  /** Sends every held reply (to whoever still listens) and returns how many there were. */
  releaseAll(): number {
    const released = this.#parked.splice(0);
    for (const parked of released) parked.release();
    return released.length;
  }
}
