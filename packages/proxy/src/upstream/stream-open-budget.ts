/** Event streams (GETs) a URL upstream's connection opens at once before the rate applies. */
export const STREAM_OPEN_BURST = 10;
/** Event streams a URL upstream's connection opens a second after the burst. */
export const STREAM_OPENS_PER_SECOND = 1;

/**
 * How long to wait before opening one more event stream (a GET) to an upstream: nothing for a burst, then
 * one a second (each call reserves its turn). The SDK opens a stream again as soon as the server ends it (at
 * once when the server said `retry: 0`), the resumption of a call's answer and the HTTP+SSE connection's
 * stream alike: a server ending each at once would otherwise keep the proxy looping, hundreds of requests a
 * second, for as long as the connection lasts.
 */
export function streamOpenBudget(
  now: () => number = Date.now,
  burst: number = STREAM_OPEN_BURST,
  perSecond: number = STREAM_OPENS_PER_SECOND,
): () => number {
  let tokens = burst;
  let last = now();
  return () => {
    const at = now();
    tokens = Math.min(burst, tokens + ((at - last) / 1000) * perSecond);
    last = at;
    tokens -= 1;
    return tokens >= 0 ? 0 : Math.ceil((-tokens / perSecond) * 1000);
  };
}
