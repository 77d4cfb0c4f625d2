/**
 * What the session runtime is told after a call (what ran, what it returned), kept off the reply's path:
 * the reply goes to the agent first and the observation runs right after it. No decision may miss a
 * result, so before any decision of a session (and before the session closes) its queued observations
 * run, in the order the results came back: provenance sees every result before a later call is judged.
 */
export class PendingObservations {
  readonly #queues = new Map<string, (() => void)[]>();
  readonly #onError: (err: unknown) => void;
  #scheduled = false;

  /** @param onError - an observation that throws is reported here; the ones after it still run */
  constructor(onError: (err: unknown) => void) {
    this.#onError = onError;
  }

  /** Queues `work` for session `sessionId`: it runs once the current replies are out, or at `settle`. */
  add(sessionId: string, work: () => void): void {
    let queue = this.#queues.get(sessionId);
    if (queue === undefined) {
      queue = [];
      this.#queues.set(sessionId, queue);
    }
    queue.push(work);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.settleAll();
    });
  }

  /** Runs every queued observation of `sessionId` now, oldest first (call before deciding for that session). */
  settle(sessionId: string): void {
    const queue = this.#queues.get(sessionId);
    if (queue === undefined) return;
    this.#queues.delete(sessionId);
    for (const work of queue) {
      try {
        work();
      } catch (err) {
        this.#onError(err);
      }
    }
  }

  /** Runs every queued observation of every session. */
  settleAll(): void {
    for (const sessionId of [...this.#queues.keys()]) this.settle(sessionId);
  }

  /** How many observations of `sessionId` are queued (tests, inspection). */
  pending(sessionId: string): number {
    return this.#queues.get(sessionId)?.length ?? 0;
  }
}
