import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  McpError,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Progress,
  type Result,
} from "@modelcontextprotocol/sdk/types.js";

import { WrappedTransport } from "../transport/wrapped-transport.js";

/**
 * What the relay watches of a request's cancellation: an `AbortSignal` has all of it, and so has the fast
 * path's `CallAbort`, which makes no signal unless one is asked for.
 */
export interface AbortWatch {
  readonly aborted: boolean;
  /** The abort's reason (undefined until aborted). */
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** One request sent through the relay. */
export interface RelayedRequest {
  /** Aborting cancels the request upstream (`notifications/cancelled`) and rejects with the abort reason. */
  readonly signal: AbortWatch;
  /** Bound on the wait, ms; ends in an `McpError` RequestTimeout (the request is cancelled upstream). */
  readonly timeoutMs: number;
  /**
   * Bound on the whole wait, ms, however much progress comes (progress restarts `timeoutMs`, never this): an
   * upstream that sends progress for ever is cut off here, as `timeoutMs` cuts off a silent one. Absent: none.
   */
  readonly maxTotalMs?: number;
  /**
   * The request carries `_meta.progressToken = token`: each `notifications/progress` with that token goes to
   * `onProgress` (in the order the upstream sent it, before the reply) and restarts the `timeoutMs` bound.
   */
  readonly progress?: { readonly token: string; readonly onProgress: (progress: Progress) => void };
}

/** The prefix of the relay's request ids. The SDK client numbers its ids, so a string id is never its. */
export const RELAY_ID_PREFIX = "acp-relay-";
const ID_PREFIX = RELAY_ID_PREFIX;

type Reply = { readonly result: Result } | { readonly error: { code: number; message: string; data?: unknown } };

/**
 * An upstream transport (stdio, streamable HTTP, SSE) as the SDK `Client` sees it, with a second door for the
 * proxy's accepted `tools/call`s: `request` sends a JSON-RPC request with an id from its own space
 * (`acp-relay-1`, …) straight to the transport and takes the matching reply (and the progress of that
 * request) before the client would. Everything else — initialize, listings, resources, prompts, requests
 * and notifications from the server — goes to and from the SDK client unchanged. The transport still does
 * the framing and validates every message.
 */
export class UpstreamRelay extends WrappedTransport {
  readonly #pending = new Map<string, (reply: Reply) => void>();
  readonly #progress = new Map<string, (progress: Progress) => void>();
  readonly #failAll = new Set<(error: McpError) => void>();
  /** Each request in flight's way to end it: cancelled upstream, rejected with the reason. */
  readonly #cancels = new Map<string, (reason: unknown) => void>();
  readonly #scrub: (message: JSONRPCMessage) => JSONRPCMessage;
  #next = 0;
  #closed = false;
  readonly #settled: ((id: string) => void) | undefined;

  /**
   * @param scrub - applied to every message the upstream sends before anyone reads it (the proxy removes the
   *   secret values it injected); a scrub that throws drops the message, reported as a transport error
   * @param settled - told the id of each request no longer waited for (answered, timed out, cancelled): an
   *   HTTP transport ends the request's answer stream there (see `RequestCarriers`)
   */
  constructor(
    inner: Transport,
    scrub: (message: JSONRPCMessage) => JSONRPCMessage = (m) => m,
    settled?: (id: string) => void,
  ) {
    super(inner);
    this.#scrub = scrub;
    this.#settled = settled;
    inner.onmessage = (message, extra) => {
      let scrubbed: JSONRPCMessage;
      try {
        scrubbed = this.#scrub(message);
      } catch (err) {
        this.onerror?.(new Error(`a message could not be checked for secrets, so it was dropped: ${String(err)}`));
        return;
      }
      this.#received(scrubbed, extra);
    };
    inner.onclose = () => {
      this.#closed = true;
      this.onclose?.();
      const error = new McpError(ErrorCode.ConnectionClosed, "Connection closed");
      for (const fail of [...this.#failAll]) fail(error);
    };
  }

  /** Requests in flight through the relay (tests, inspection). */
  get inFlight(): number {
    return this.#pending.size;
  }

  /**
   * Sends `method` with `params` and resolves with the upstream's result unchanged; a JSON-RPC error becomes
   * an `McpError`, a closed connection an `McpError` ConnectionClosed, as the SDK client would report them.
   */
  request(method: string, params: Record<string, unknown>, call: RelayedRequest): Promise<Result> {
    if (this.#closed) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
    // rejected with the abort reason itself, as the SDK client does (the caller tells cancellation apart by it)
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    if (call.signal.aborted) return Promise.reject(call.signal.reason);
    this.#next += 1;
    const id = `${ID_PREFIX}${this.#next}`;
    const token = call.progress?.token;
    return new Promise<Result>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (): void => {
        clearTimeout(timer);
        this.#pending.delete(id);
        if (token !== undefined) this.#progress.delete(token);
        this.#failAll.delete(fail);
        this.#cancels.delete(id);
        call.signal.removeEventListener("abort", onAbort);
        this.#settled?.(id);
      };
      const fail = (error: unknown): void => {
        settle();
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        reject(error);
      };
      const cancel = (reason: unknown): void => {
        fail(reason);
        this.inner
          .send({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id, reason: String(reason) },
          })
          .catch((err: unknown) => this.onerror?.(err instanceof Error ? err : new Error(String(err))));
      };
      const started = Date.now();
      const arm = (): void => {
        clearTimeout(timer);
        const left = call.maxTotalMs === undefined ? Infinity : call.maxTotalMs - (Date.now() - started);
        if (left < call.timeoutMs) {
          const total = call.maxTotalMs;
          timer = setTimeout(
            () =>
              cancel(
                new McpError(ErrorCode.RequestTimeout, `Request took longer than its ${(total ?? 0) / 1000} s in all`, {
                  maxTotalTimeout: total,
                }),
              ),
            Math.max(0, left),
          );
        } else {
          timer = setTimeout(
            () => cancel(new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: call.timeoutMs })),
            call.timeoutMs,
          );
        }
      };
      const onAbort = (): void => cancel(call.signal.reason);
      this.#pending.set(id, (reply) => {
        settle();
        if ("error" in reply) reject(McpError.fromError(reply.error.code, reply.error.message, reply.error.data));
        else resolve(reply.result);
      });
      if (token !== undefined && call.progress !== undefined) {
        const onProgress = call.progress.onProgress;
        this.#progress.set(token, (progress) => {
          arm();
          onProgress(progress);
        });
      }
      this.#failAll.add(fail);
      this.#cancels.set(id, cancel);
      call.signal.addEventListener("abort", onAbort, { once: true });
      arm();
      this.inner.send({ jsonrpc: "2.0", id, method, params }).catch(fail);
    });
  }

  /**
   * Fails the request `id` now, when its answer can no longer come (its HTTP answer ended without it, or
   * carried what is no JSON-RPC): it rejects with an `Error` saying `why` (with the secret values scrubbed;
   * the proxy reports it as the upstream's failure), is cancelled upstream, and `why` is reported as a
   * transport error. Nothing when the request is no longer in flight (false).
   */
  failRequest(id: string, why: string): boolean {
    const cancel = this.#cancels.get(id);
    if (cancel === undefined) return false;
    const said = this.#scrubText(why);
    this.onerror?.(new Error(`call \`${id}\` failed at once: ${said}`));
    cancel(new Error(said));
    return true;
  }

  /**
   * Fails every request in flight now, when the one stream carrying their answers is gone (an HTTP+SSE
   * connection's): as {@link failRequest}, each with `why`.
   */
  failAll(why: string): void {
    if (this.#cancels.size === 0) return;
    const said = this.#scrubText(why);
    this.onerror?.(new Error(`${this.#cancels.size} call(s) in flight failed at once: ${said}`));
    for (const cancel of [...this.#cancels.values()]) cancel(new Error(said));
  }

  /** `text` with the secret values scrubbed, as a message of the upstream's is (undefined if the scrub failed). */
  #scrubText(text: string): string {
    try {
      const scrubbed = this.#scrub({ jsonrpc: "2.0", method: "notifications/message", params: { data: text } });
      const out = (scrubbed as { params?: { data?: unknown } }).params?.data;
      return typeof out === "string" ? out : "(what it sent could not be checked for secrets)";
    } catch {
      return "(what it sent could not be checked for secrets)";
    }
  }

  /** Whether `id` is one of the relay's ids already sent (`acp-relay-1` … the last). */
  #sent(id: string): boolean {
    const digits = id.slice(ID_PREFIX.length);
    const n = /^[1-9][0-9]{0,15}$/.test(digits) ? Number(digits) : 0;
    return n >= 1 && n <= this.#next;
  }

  #received(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    if ("id" in message && typeof message.id === "string" && message.id.startsWith(ID_PREFIX)) {
      const pending = this.#pending.get(message.id);
      if ("result" in message) pending?.({ result: message.result });
      else if ("error" in message) pending?.({ error: message.error });
      if ("result" in message || "error" in message) {
        // a late reply (the call was cancelled or timed out) is dropped: it is nobody's; an answer to an id
        // never sent is dropped too, and said (the server answers requests it was not sent)
        if (pending === undefined && !this.#sent(message.id)) {
          const shown = JSON.stringify(message.id.length > 80 ? `${message.id.slice(0, 80)}…` : message.id);
          this.onerror?.(new Error(`an answer to ${shown}, an id the proxy never sent: dropped`));
        }
        return;
      }
    }
    if ("method" in message && message.method === "notifications/progress" && !("id" in message)) {
      const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken;
      const route = typeof token === "string" ? this.#progress.get(token) : undefined;
      if (route !== undefined) {
        const { progressToken, ...progress } = message.params as Progress & { progressToken: unknown };
        void progressToken;
        route(progress);
        return;
      }
    }
    this.onmessage?.(message, extra);
  }
}
