import type { Progress, ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js";

/** Sends progress for one downstream call: consent-wait ticks first, then the upstream's own progress. */
export interface ProgressRelay {
  /** A consent-wait tick (or a broker message). */
  waiting(message: string): void;
  /** An upstream progress notification, shifted so the values keep increasing. */
  upstream(progress: Progress): void;
  /** Resolves once every notification sent so far has reached the transport (call before replying). */
  flush(): Promise<void>;
}

/**
 * Creates a relay for a call whose client supplied `progressToken`. Progress must increase with every
 * notification: wait ticks count 1, 2, …; upstream progress is added to the number of ticks sent.
 */
export function createProgressRelay(
  token: ProgressToken,
  send: (notification: ServerNotification) => Promise<void>,
): ProgressRelay {
  let ticks = 0;
  let last: Promise<void> = Promise.resolve();
  const emit = (params: { progress: number; total?: number; message?: string }): void => {
    const sent = send({ method: "notifications/progress", params: { progressToken: token, ...params } });
    last = Promise.all([last, sent.catch(() => undefined)]).then(() => undefined);
  };
  return {
    waiting(message) {
      ticks += 1;
      emit({ progress: ticks, message });
    },
    upstream(progress) {
      emit({
        progress: ticks + progress.progress,
        ...(progress.total !== undefined ? { total: ticks + progress.total } : {}),
        ...(progress.message !== undefined ? { message: progress.message } : {}),
      });
    },
    flush: () => last,
  };
}
