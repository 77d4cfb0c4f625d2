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

class FinalDeliveryError extends Error {}

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

async function postOnce(body: string, options: WebhookPostOptions, signal: AbortSignal): Promise<number> {
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
    return response.status;
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
 * (`attemptTimeoutMs`), 408/425/429 and 5xx with exponential backoff (`initialBackoffMs`, doubled each time). Resolves on a 2xx; rejects on a 3xx (not followed), another
 * 4xx, or when the attempts run out. Stops at once when `signal` aborts.
 */
export async function postWithRetries(body: string, options: WebhookPostOptions, signal: AbortSignal): Promise<void> {
  let last = "";
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    if (attempt > 1) await sleep(options.initialBackoffMs * 2 ** (attempt - 2), signal, options.timers);
    try {
      const status = await postOnce(body, options, signal);
      if (status >= 200 && status < 300) return;
      last = `the receiver answered ${status}${status >= 300 && status < 400 ? " (redirects are not followed)" : ""}`;
      if (!retryable(status)) throw new FinalDeliveryError(`webhook delivery refused: ${last}`);
    } catch (error) {
      if (signal.aborted || error instanceof FinalDeliveryError) throw error;
      last = error instanceof Error ? error.message : String(error);
    }
  }
  throw new Error(`webhook delivery failed after ${options.maxAttempts} attempts: ${last}`);
}
