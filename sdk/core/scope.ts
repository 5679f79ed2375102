import { RequestAbortedError, TimeoutError } from "./errors";
import type { RequestOptions } from "./types";

/** The caller's signal and deadline folded into one signal whose reason is the error to throw. */
export class CallScope {
  readonly #controller = new AbortController();
  readonly #cleanup: (() => void)[] = [];

  constructor(method: string, path: string, options: RequestOptions) {
    const user = options.signal;
    if (user) {
      const onAbort = () =>
        this.#controller.abort(
          new RequestAbortedError(`${method} ${path}: aborted by the caller`, { cause: user.reason }),
        );
      if (user.aborted) onAbort();
      else {
        user.addEventListener("abort", onAbort, { once: true });
        this.#cleanup.push(() => user.removeEventListener("abort", onAbort));
      }
    }
    if (options.deadline !== undefined && !this.#controller.signal.aborted) {
      const fire = () => this.#controller.abort(new TimeoutError(`${method} ${path}: deadline passed`));
      const ms = options.deadline - Date.now();
      if (ms <= 0) fire();
      else {
        const timer = setTimeout(fire, ms);
        this.#cleanup.push(() => clearTimeout(timer));
      }
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Awaits `p`, but a fired scope turns any rejection into the scope's own error. */
  async guard<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      if (this.signal.aborted) throw this.signal.reason;
      throw err;
    }
  }

  sleep(ms: number): Promise<void> {
    const signal = this.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  dispose(): void {
    for (const fn of this.#cleanup) fn();
  }
}
