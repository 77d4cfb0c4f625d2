import type { AbortWatch } from "../upstream/upstream-relay.js";

/**
 * The cancellation of one call the fast path took, as an `AbortController` gives it, but with the signal made
 * only when something asks for `signal` (a consent wait, a plan hook): on Node 20 making an `AbortSignal`
 * costs ~5 µs, and adding and removing a listener on one ~2 µs, on every accepted call, which only watches
 * for the abort (the upstream relay). `abort` aborts the signal if one was made (its listeners run first, as
 * they were added before), then calls the listeners added here, in the order added; `aborted` and `reason`
 * are the signal's (a reason left undefined is the signal's `AbortError`). A listener that throws is
 * reported as an uncaught exception, as an `EventTarget` reports it, and the others still run.
 */
export class CallAbort implements AbortWatch {
  readonly #controller = new AbortController();
  #signal: AbortSignal | undefined;
  #listeners: (() => void)[] = [];

  /** The call's `AbortSignal`, made on first use: aborted when {@link abort} was called. */
  get signal(): AbortSignal {
    this.#signal ??= this.#controller.signal;
    return this.#signal;
  }

  get aborted(): boolean {
    return this.#signal?.aborted ?? false;
  }

  get reason(): unknown {
    return this.#signal?.reason as unknown;
  }

  /** Aborts the call once (a later abort changes nothing), with `reason` as `AbortController.abort` takes it. */
  abort(reason?: unknown): void {
    if (this.signal.aborted) return;
    this.#controller.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) {
      try {
        listener();
      } catch (err) {
        process.nextTick(() => {
          throw err;
        });
      }
    }
  }

  /** Listens for the abort (`once` or not: an abort happens once); a listener already added is not added again. */
  addEventListener(type: "abort", listener: () => void): void {
    if (type !== "abort" || this.aborted || this.#listeners.includes(listener)) return;
    this.#listeners.push(listener);
  }

  removeEventListener(type: "abort", listener: () => void): void {
    if (type !== "abort") return;
    const at = this.#listeners.indexOf(listener);
    if (at >= 0) this.#listeners.splice(at, 1);
  }
}
