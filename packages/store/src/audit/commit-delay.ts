import type { Pending } from "./batch-queue.js";

/** With a commit delay, a commit starts at once when this many events are queued. */
export const COMMIT_AT_EVENTS = 512;

/**
 * When the audit writer's next group commit starts (`batch` mode with `commitDelayMs`): once the oldest
 * queued event has waited the delay, at once when a caller waits for the commit (an urgent append, a
 * checkpoint, `flush`, `close`) or when {@link COMMIT_AT_EVENTS} events are queued. Without a delay it
 * never waits. The writer owns the queue; this only decides how long the commit waits for company.
 */
export class CommitDelay {
  /** A caller is waiting: the next commit does not wait. */
  private hurry = false;
  /** Ends the current wait early (set while it waits). */
  private wake: (() => void) | null = null;
  /** Events queued, counted while a wait is on. */
  private waitingFor = 0;
  /** `flush` calls in progress: the commits they wait for do not wait. */
  private flushes = 0;

  constructor(readonly delayMs: number) {}

  /** When a queued call was queued, for {@link wait} (0 without a delay: no clock read). */
  stamp(): number {
    return this.delayMs > 0 ? performance.now() : 0;
  }

  /** A call of `count` events was queued; `urgent`: its caller waits for the commit. */
  queued(count: number, urgent: boolean): void {
    if (urgent || (this.wake !== null && (this.waitingFor += count) >= COMMIT_AT_EVENTS)) this.hurryUp();
  }

  /** The next commit starts without waiting (a caller waits for it). */
  hurryUp(): void {
    this.hurry = true;
    this.wake?.();
  }

  /** A `flush` begins: commits start at once until it ends ({@link flushEnded}). */
  flushing(): void {
    this.flushes++;
    this.hurryUp();
  }

  flushEnded(queue: readonly Pending[]): void {
    this.flushes--;
    this.calmDown(queue);
  }

  /**
   * Waits until the oldest queued event has waited the delay, unless a caller is waiting or
   * {@link COMMIT_AT_EVENTS} events are queued.
   */
  async wait(queue: readonly Pending[]): Promise<void> {
    const oldest = queue[0];
    if (this.delayMs <= 0 || this.hurry || oldest === undefined) return;
    let queued = 0;
    for (const item of queue) if ((queued += item.count - item.taken) >= COMMIT_AT_EVENTS) return;
    const wait = oldest.queuedAt + this.delayMs - performance.now();
    if (wait <= 0) return;
    this.waitingFor = queued;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }

  /** After a batch was taken: the hurry is over once no urgent call or flush is left waiting. */
  calmDown(queue: readonly Pending[]): void {
    if (this.hurry && this.flushes === 0 && !queue.some((item) => item.urgent)) this.hurry = false;
  }
}
