import type { ConsentTimers } from "./timers.js";

/**
 * Tells a waiting caller that a person is being asked, then "still waiting" every `intervalMs` (0: only
 * the first message) until the returned function stops it.
 */
export function startProgress(
  onProgress: ((message: string) => void) | undefined,
  wait: {
    readonly tool: string;
    readonly requestId: string;
    readonly expiresAt: string;
    readonly channels: readonly string[];
  },
  timers: ConsentTimers,
  intervalMs: number,
): () => void {
  if (onProgress === undefined) return () => undefined;
  const names = wait.channels.join(", ");
  onProgress(`waiting for a person to approve \`${wait.tool}\` (${wait.requestId}) via ${names}`);
  if (intervalMs <= 0) return () => undefined;
  let handle: unknown;
  const tick = (): void => {
    onProgress(`still waiting for consent on ${wait.requestId} (expires ${wait.expiresAt})`);
    handle = timers.setTimeout(tick, intervalMs);
  };
  handle = timers.setTimeout(tick, intervalMs);
  return () => timers.clearTimeout(handle);
}
