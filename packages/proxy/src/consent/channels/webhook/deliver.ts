import { sleep, type ConsentTimers } from "../../timers.js";
import { webhookHeaders } from "./hmac.js";

/** How the consent request is POSTed. */
export interface WebhookPostOptions {
  readonly url: string;
  readonly secret: string;
  readonly clock: () => Date;
  readonly fetch: typeof fetch;
  readonly timers: ConsentTimers;
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  /** How long one attempt may take (connect, headers, body) before it counts as failed. */
  readonly attemptTimeoutMs: number;
  readonly callbackUrl?: string;
}

/** The receiver refused for good (a 3xx, a 4xx that is not worth retrying): no attempt will change it. */
export class FinalDeliveryError extends Error {}

function retryable(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/**
 * The URL to POST to and its `Authorization`: `user:password@` in the configured URL becomes HTTP Basic
 * authentication (fetch refuses a URL with credentials, and its error message would quote them).
 */
export function targetOf(url: string): { readonly url: string; readonly authorization?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url };
  }
  if (parsed.username === "" && parsed.password === "") return { url };
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  parsed.username = "";
  parsed.password = "";
  return { url: parsed.href, authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` };
}

/** The longest `Retry-After` honoured (a longer one waits this long; the request's expiry still ends it). */
export const MAX_RETRY_AFTER_MS = 60_000;

/** `Retry-After` in ms (delay-seconds or an HTTP date), capped at {@link MAX_RETRY_AFTER_MS}; null when absent. */
function retryAfterMs(value: string | null, now: Date): number | null {
  if (value === null || value.trim() === "") return null;
  const text = value.trim();
  const ms = /^\d{1,9}$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now.getTime();
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS) : null;
}

async function postOnce(
  body: string,
  options: WebhookPostOptions,
  signal: AbortSignal,
): Promise<{ status: number; retryAfterMs: number | null }> {
  const target = targetOf(options.url);
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    ...webhookHeaders(options.secret, body, options.clock()),
    ...(target.authorization !== undefined ? { Authorization: target.authorization } : {}),
  };
  if (options.callbackUrl !== undefined) headers["X-ACP-Callback-URL"] = options.callbackUrl;
  // one attempt ends when the request is over (signal) or when the receiver takes too long
  const attempt = new AbortController();
  const onAbort = (): void => attempt.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const timer = options.timers.setTimeout(
    () => attempt.abort(new Error(`the receiver did not answer within ${options.attemptTimeoutMs} ms`)),
    options.attemptTimeoutMs,
  );
  try {
    // a redirect is not followed: the signed request goes to the configured URL or nowhere
    const init = { method: "POST", headers, body, signal: attempt.signal, redirect: "manual" } as const;
    const response = await options.fetch(target.url, init);
    await response.body?.cancel();
    return {
      status: response.status,
      retryAfterMs: retryAfterMs(response.headers.get("retry-after"), options.clock()),
    };
  } catch (error) {
    const reason: unknown = attempt.signal.reason;
    if (!signal.aborted && attempt.signal.aborted && reason instanceof Error) throw reason;
    throw error;
  } finally {
    options.timers.clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

/**
 * POSTs the body, signed fresh on every attempt, retrying network errors, attempts that time out
 * (`attemptTimeoutMs`), 408/425/429 and 5xx with exponential backoff (`initialBackoffMs`, doubled each time), or
 * after the answer's `Retry-After` when that is longer (at most a minute). Resolves on a 2xx; rejects on a 3xx (not
 * followed), another 4xx, or when the attempts run out. Stops at once when `signal` aborts.
 */
export async function postWithRetries(body: string, options: WebhookPostOptions, signal: AbortSignal): Promise<void> {
  let last = "";
  let asked: number | null = null;
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    if (attempt > 1) {
      const backoff = options.initialBackoffMs * 2 ** (attempt - 2);
      await sleep(Math.max(backoff, asked ?? 0), signal, options.timers);
    }
    asked = null;
    try {
      const { status, retryAfterMs: after } = await postOnce(body, options, signal);
      if (status >= 200 && status < 300) return;
      last = `the receiver answered ${status}${status >= 300 && status < 400 ? " (redirects are not followed)" : ""}`;
      if (!retryable(status)) throw new FinalDeliveryError(`webhook delivery refused: ${last}`);
      asked = after;
    } catch (error) {
      if (signal.aborted || error instanceof FinalDeliveryError) throw error;
      last = error instanceof Error ? error.message : String(error);
    }
  }
  throw new Error(`webhook delivery failed after ${options.maxAttempts} attempts: ${last}`);
}
