import type { ConsentTimers } from "./timers.js";
import type { ConsentChannel } from "./types.js";

async function isAvailableWithin(channel: ConsentChannel, timers: ConsentTimers, timeoutMs: number): Promise<boolean> {
  let handle: unknown;
  const timeout = new Promise<boolean>((resolve) => {
    handle = timers.setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => channel.isAvailable()), timeout]);
  } catch {
    return false;
  } finally {
    timers.clearTimeout(handle);
  }
}

/**
 * The channels that can reach a person now, in order. A channel whose check fails, throws or takes longer than
 * `timeoutMs` is skipped, and the caller hears about it through `onProgress`.
 */
export async function checkAvailability(
  channels: readonly ConsentChannel[],
  options: { readonly timers: ConsentTimers; readonly timeoutMs: number; readonly onProgress?: (m: string) => void },
): Promise<ConsentChannel[]> {
  const checks = await Promise.all(channels.map((c) => isAvailableWithin(c, options.timers, options.timeoutMs)));
  const available = channels.filter((_, i) => checks[i] === true);
  for (const [i, channel] of channels.entries()) {
    if (checks[i] !== true) options.onProgress?.(`consent channel \`${channel.name}\` is unavailable, skipping it`);
  }
  return available;
}
