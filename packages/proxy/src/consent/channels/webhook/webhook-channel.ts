import type { IncomingMessage, ServerResponse } from "node:http";
import { abortError, realTimers, sleep, type ConsentTimers } from "../../timers.js";
import type {
  ChannelDelivery,
  ChannelSettlement,
  ConsentChannel,
  ConsentRequestV02,
  HumanAnswer,
  SettledBy,
} from "../../types.js";
import { CALLBACK_READ_TIMEOUT_MS, answerFromCallback, readBody, reply, utf8Of } from "./callback.js";
import { FinalDeliveryError, postWithRetries } from "./deliver.js";
import { findKeyProblem } from "../../../transport/json-keys.js";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, checkWebhookSignature } from "./hmac.js";

/** What the webhook channel needs. */
export interface WebhookChannelOptions {
  /** Where the consent request is POSTed. */
  readonly url: string;
  /** The shared secret both directions are signed with (HMAC-SHA256). */
  readonly secret: string;
  readonly clock: () => Date;
  /** Sent as `X-ACP-Callback-URL` so the receiver knows where to answer. */
  readonly callbackUrl?: string;
  /** Default: the global fetch. */
  readonly fetch?: typeof fetch;
  readonly timers?: ConsentTimers;
  /** Default 5. */
  readonly maxAttempts?: number;
  /** Default 500 ms, doubled after each failed attempt. */
  readonly initialBackoffMs?: number;
  /** How long one POST of a consent request may take before it is retried. Default 10 s. */
  readonly attemptTimeoutMs?: number;
  /** How long the first `consent_settled` POST may take (the agent's call waits for it; retries run in the background). Default 5 s. */
  readonly settleTimeoutMs?: number;
  /** How long a callback client may take to send its body (answered 408 after). Default 10 s. */
  readonly callbackReadTimeoutMs?: number;
  /** How far a callback's timestamp may be from now. Default 5 minutes. */
  readonly toleranceMs?: number;
  /**
   * A signed callback for a request this channel does not hold: another process sent it (several proxies of one
   * home share one fixed callback address; only one can listen). Record the answer where the request's own proxy
   * reads answers, if `nonce` is that request's (`acp proxy` records it in the home's pending table, as
   * `acp approve` does); true when recorded. Without it, or when it returns false, the callback gets 404.
   */
  readonly forward?: (requestId: string, answer: HumanAnswer, nonce: string) => boolean | Promise<boolean>;
}

/** The webhook channel, plus the callback endpoint to mount (`POST`, any path). */
export interface WebhookChannel extends ConsentChannel {
  /** Handles a signed decision callback. Mount it on an HTTP server the receiver can reach. */
  handleCallback(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

interface Waiter {
  readonly nonce: string;
  readonly resolve: (answer: HumanAnswer) => void;
}

class WebhookChannelImpl implements WebhookChannel {
  readonly name = "webhook";
  readonly #o: WebhookChannelOptions;
  readonly #waiters = new Map<string, Waiter>();
  /** Signatures already accepted, with when they may be forgotten (after the tolerance window). */
  readonly #seen = new Map<string, number>();
  /** `consent_settled` notices retried in the background (their first POST failed). */
  readonly #settling = new Set<AbortController>();
  #closed = false;

  constructor(options: WebhookChannelOptions) {
    this.#o = options;
  }

  isAvailable(): boolean {
    return this.#o.url !== "" && this.#o.secret !== "";
  }

  async deliver(delivery: ChannelDelivery): Promise<HumanAnswer> {
    const { request, signal } = delivery;
    // the POST stops once the request is over, or once an answer came back (even while the POST is still open:
    // a receiver may post the decision before it answers the request's POST, or answer that POST badly)
    const posting = new AbortController();
    const stopPosting = (): void => posting.abort(signal.reason);
    signal.addEventListener("abort", stopPosting, { once: true });
    try {
      return await new Promise<HumanAnswer>((resolve, reject) => {
        const onAbort = (): void => {
          this.#waiters.delete(request.id);
          reject(abortError(signal));
        };
        this.#waiters.set(request.id, {
          nonce: request.nonce,
          resolve: (answer) => {
            signal.removeEventListener("abort", onAbort);
            resolve(answer);
          },
        });
        if (signal.aborted) {
          onAbort();
          return;
        }
        signal.addEventListener("abort", onAbort, { once: true });
        postWithRetries(JSON.stringify(request), this.#postOptions(), posting.signal).catch((error: unknown) => {
          if (posting.signal.aborted || !this.#waiters.has(request.id)) return;
          this.#waiters.delete(request.id);
          signal.removeEventListener("abort", onAbort);
          reject(error instanceof Error ? error : new Error(String(error)));
        });
      });
    } finally {
      signal.removeEventListener("abort", stopPosting);
      posting.abort("answered");
    }
  }

  /**
   * Tells the receiver how the request ended (`consent_settled`, signed). The agent's call waits for the first
   * attempt only (at most `settleTimeoutMs`), so a receiver that never answers cannot hold it; when that attempt
   * fails in a way a retry can mend (no answer, a timeout, 408/425/429, 5xx) the notice is sent again in the
   * background with the same backoff as a consent request (`maxAttempts` more attempts), so a receiver that was
   * briefly down does not keep showing a request as open. `close()` stops those retries.
   */
  async settle(
    request: ConsentRequestV02,
    outcome: ChannelSettlement,
    _by?: SettledBy,
    reason?: string,
  ): Promise<void> {
    const why = reason !== undefined ? { reason } : {};
    const body = JSON.stringify({ type: "consent_settled", request_id: request.id, outcome, ...why });
    const options = this.#postOptions();
    const first = { ...options, maxAttempts: 1, attemptTimeoutMs: this.#o.settleTimeoutMs ?? 5_000 };
    try {
      await postWithRetries(body, first, new AbortController().signal);
      return;
    } catch (error) {
      if (error instanceof FinalDeliveryError || this.#closed) return;
    }
    const control = new AbortController();
    this.#settling.add(control);
    void sleep(options.initialBackoffMs, control.signal, options.timers)
      .then(() => postWithRetries(body, options, control.signal))
      .catch(() => undefined)
      .finally(() => this.#settling.delete(control));
  }

  /** Stops the background retries of `consent_settled` notices. */
  close(): Promise<void> {
    this.#closed = true;
    for (const control of this.#settling) control.abort(new Error("the channel closed"));
    this.#settling.clear();
    return Promise.resolve();
  }

  async handleCallback(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (req.method !== "POST") return reply(res, 405, { error: "method_not_allowed" }, true);
      const timers = this.#o.timers ?? realTimers;
      const read = await readBody(req, timers, this.#o.callbackReadTimeoutMs ?? CALLBACK_READ_TIMEOUT_MS);
      if ("error" in read) {
        if (read.error === "too_large") return reply(res, 413, { error: "body_too_large" }, true);
        if (read.error === "timeout") return reply(res, 408, { error: "body_timeout" }, true);
        return void res.destroy();
      }
      const now = this.#o.clock();
      const signature = req.headers[SIGNATURE_HEADER];
      const headers = { timestamp: req.headers[TIMESTAMP_HEADER], signature };
      const failure = checkWebhookSignature(this.#o.secret, "callback", headers, read.bytes, now, this.#tolerance());
      if (failure !== null) return reply(res, 401, { error: failure });
      if (!this.#firstUse(signature as string, Number(headers.timestamp) * 1000, now)) {
        return reply(res, 409, { error: "replayed_callback" });
      }
      const body = utf8Of(read.bytes);
      if (body === null) return reply(res, 400, { error: "malformed_json", message: "the body is not UTF-8" });
      return await this.#accept(res, body, now);
    } catch {
      return reply(res, 500, { error: "internal_error" });
    }
  }

  async #accept(res: ServerResponse, body: string, now: Date): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return reply(res, 400, { error: "malformed_json" });
    }
    // a key given twice would be read as its last value here and maybe as its first by whoever signed it
    const problem = typeof parsed === "object" && parsed !== null ? findKeyProblem(body) : null;
    if (problem !== null) return reply(res, 400, { error: "malformed_json", message: problem });
    const { request_id: id, nonce } = (parsed ?? {}) as { request_id?: unknown; nonce?: unknown };
    const waiter = typeof id === "string" ? this.#waiters.get(id) : undefined;
    if (waiter === undefined) return this.#forward(res, parsed, id, nonce, now);
    if (nonce !== waiter.nonce) return reply(res, 409, { error: "nonce_mismatch" });
    const result = answerFromCallback(parsed, now);
    if ("error" in result) return reply(res, 400, { error: "malformed_answer", message: result.error });
    this.#waiters.delete(id as string);
    // answered when the callback came in, by this channel's clock (not the receiver's word)
    waiter.resolve({ ...result.answer, answeredAtMs: now.getTime() });
    return reply(res, 200, { ok: true });
  }

  /** A callback for a request not held here: handed to `forward` (another proxy's), else 404. */
  async #forward(res: ServerResponse, parsed: unknown, id: unknown, nonce: unknown, now: Date): Promise<void> {
    const forward = this.#o.forward;
    if (forward === undefined || typeof id !== "string" || typeof nonce !== "string") {
      return reply(res, 404, { error: "consent_request_unknown" });
    }
    const result = answerFromCallback(parsed, now);
    if ("error" in result) return reply(res, 400, { error: "malformed_answer", message: result.error });
    let recorded = false;
    try {
      recorded = await forward(id, { ...result.answer, channel: "webhook" }, nonce);
    } catch {
      recorded = false;
    }
    return recorded ? reply(res, 200, { ok: true }) : reply(res, 404, { error: "consent_request_unknown" });
  }

  /**
   * Whether a signature is seen for the first time. It is remembered for as long as its timestamp passes the
   * window (up to `timestamp + tolerance` inclusive), and forgotten only once that is over: forgetting it at the
   * last instant it still passed let it be taken twice.
   */
  #firstUse(signature: string, timestampMs: number, now: Date): boolean {
    for (const [sig, forgetAfter] of this.#seen) if (forgetAfter < now.getTime()) this.#seen.delete(sig);
    if (this.#seen.has(signature)) return false;
    this.#seen.set(signature, timestampMs + this.#tolerance());
    return true;
  }

  #tolerance(): number {
    return this.#o.toleranceMs ?? 5 * 60_000;
  }

  #postOptions(): Parameters<typeof postWithRetries>[1] {
    return {
      url: this.#o.url,
      secret: this.#o.secret,
      clock: this.#o.clock,
      fetch: this.#o.fetch ?? fetch,
      timers: this.#o.timers ?? realTimers,
      maxAttempts: this.#o.maxAttempts ?? 5,
      initialBackoffMs: this.#o.initialBackoffMs ?? 500,
      attemptTimeoutMs: this.#o.attemptTimeoutMs ?? 10_000,
      ...(this.#o.callbackUrl !== undefined ? { callbackUrl: this.#o.callbackUrl } : {}),
    };
  }
}

/**
 * The webhook channel: POSTs each consent request (signed `X-ACP-Signature: sha256=<hmac of "<ts>.<body>">`,
 * `X-ACP-Timestamp`), retrying with backoff, and takes the decision on `handleCallback`, signed the same way.
 * A forged or stale callback gets 401, a replayed one 409, one for an unknown request 404.
 */
export function createWebhookChannel(options: WebhookChannelOptions): WebhookChannel {
  return new WebhookChannelImpl(options);
}
