/** Bounds the requests one client has in flight; waiters are served first come, first served. */
export class Semaphore {
  #free: number;
  readonly #waiters: { grant: () => void; signal: AbortSignal | undefined; onAbort: () => void }[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`concurrency must be a positive integer, got ${size}`);
    this.#free = size;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /** Resolves with a release function that must be called exactly once. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        signal,
        grant: () => resolve(this.#releaser()),
        onAbort: () => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          reject(signal?.reason);
        },
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next) {
        next.signal?.removeEventListener("abort", next.onAbort);
        next.grant();
      } else {
        this.#free += 1;
      }
    };
  }
}
