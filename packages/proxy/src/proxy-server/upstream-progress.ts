import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ErrorCode,
  McpError,
  ProgressNotificationSchema,
  type Progress,
  type ProgressNotification,
  type Result,
} from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamPool } from "../upstream/upstream-pool.js";

/**
 * Upstream progress, routed by progress tokens the proxy chooses (`acp:<call id>`).
 *
 * Why not the SDK's `onprogress`: the SDK client handles a notification one microtask after reading it,
 * but a response at once, and forgets the request's progress handler with the response. A server that
 * sends its last progress notification and then its result in one write (any stdio server, typically)
 * loses that last notification. Here the route lives until the proxy has answered its own client.
 */
export class UpstreamProgress {
  readonly #routes = new Map<string, (progress: Progress) => void>();

  /** Takes over `notifications/progress` of one upstream client; tokens not the proxy's go to the SDK. */
  install(client: Client): void {
    const sdk = client as unknown as { _onprogress?: (notification: ProgressNotification) => void };
    const fallback = typeof sdk._onprogress === "function" ? sdk._onprogress.bind(client) : undefined;
    client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
      const { progressToken, ...progress } = notification.params;
      const route = typeof progressToken === "string" ? this.#routes.get(progressToken) : undefined;
      if (route !== undefined) route(progress);
      else fallback?.(notification);
    });
  }

  /**
   * Sends `method` to `server` with progress token `token`; each progress notification goes to
   * `onProgress` and restarts the `timeoutMs` bound (ends in an `McpError` RequestTimeout). Call
   * `release(token)` once the progress has been passed on, not before.
   */
  async request(
    pool: UpstreamPool,
    call: {
      readonly server: string;
      readonly method: string;
      readonly params: Record<string, unknown>;
      readonly token: string;
      readonly timeoutMs: number;
      readonly signal: AbortSignal;
    },
    onProgress: (progress: Progress) => void,
  ): Promise<Result> {
    const controller = new AbortController();
    const timeout = (): void =>
      controller.abort(new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: call.timeoutMs }));
    let timer = setTimeout(timeout, call.timeoutMs);
    let done = false;
    const onAbort = (): void => controller.abort(call.signal.reason);
    if (call.signal.aborted) onAbort();
    else call.signal.addEventListener("abort", onAbort, { once: true });
    this.#routes.set(call.token, (progress) => {
      if (!done) {
        clearTimeout(timer);
        timer = setTimeout(timeout, call.timeoutMs);
      }
      onProgress(progress);
    });
    const meta = (call.params["_meta"] ?? {}) as Record<string, unknown>;
    try {
      return await pool.request(
        call.server,
        call.method,
        { ...call.params, _meta: { ...meta, progressToken: call.token } },
        // the bound is the timer above: the SDK's own would not be restarted by progress any more
        { signal: controller.signal, timeout: 2_147_483_647 },
      );
    } finally {
      done = true;
      clearTimeout(timer);
      call.signal.removeEventListener("abort", onAbort);
    }
  }

  /** Forgets a token: later progress with it is dropped. */
  release(token: string): void {
    this.#routes.delete(token);
  }
}
