import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  ResultSchema,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCError,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { AcpProxy, ProxySession } from "./acp-proxy.js";
import { WrappedTransport } from "../transport/wrapped-transport.js";
import { SUBMIT_PLAN_NAME } from "./submit-plan.js";
import { handleToolCall, type CallContext } from "./tool-call-handler.js";
import { CallAbort } from "./call-abort.js";
import { refusedInitialize, refusedParams } from "./request-checks.js";

/**
 * A downstream transport (stdio, streamable HTTP, SSE) as the session's SDK `Server` sees it, with the
 * proxy's fast path in front: a well-formed `tools/call` for an upstream tool, and the cancellation of
 * one, are taken by `intercept` before the server's protocol layer sees them; every other message goes to
 * the SDK server unchanged. The transport still does the framing and validates every JSON-RPC message (on
 * stdio, plainly well-formed ones by `PlainReadBuffer`, everything else by the SDK's schema).
 */
export class DownstreamTransport extends WrappedTransport {
  /** Requests answered on a stream of their own ({@link deliverDirect}), by request id. */
  readonly #direct = new Map<RequestId, DirectStream>();
  readonly #deliver: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  constructor(
    inner: Transport,
    intercept: (message: JSONRPCMessage) => boolean,
    /** Called when the transport closes, before the SDK server hears of it. */
    closing: () => void,
  ) {
    super(inner);
    // the HTTP listener sets its own onclose before the session connects: keep it
    const previousClose = inner.onclose;
    inner.onclose = () => {
      previousClose?.();
      for (const stream of this.#direct.values()) stream.end();
      this.#direct.clear();
      closing();
      this.onclose?.();
    };
    this.#deliver = (message, extra) => {
      if (!intercept(message)) this.onmessage?.(message, extra);
    };
    inner.onmessage = this.#deliver;
  }

  /** Whether a request with this id is being answered on a stream of its own. */
  answersDirectly(id: RequestId): boolean {
    return this.#direct.has(id);
  }

  /**
   * Delivers a request the HTTP listener received and answers itself: every message sent for it (its
   * response, and notifications and requests related to it) goes to `stream`, which ends after the
   * response, as the SDK transport's own stream for a POST would. False (nothing delivered) when a
   * request with that id is already answered that way.
   */
  deliverDirect(message: JSONRPCRequest, stream: DirectStream, extra?: MessageExtraInfo): boolean {
    if (this.#direct.has(message.id)) return false;
    this.#direct.set(message.id, stream);
    this.#deliver(message, extra);
    return true;
  }

  /** The client dropped `stream`: later messages of its request go to the inner transport (which has none). */
  dropDirect(id: RequestId, stream: DirectStream): void {
    if (this.#direct.get(id) === stream) this.#direct.delete(id);
  }

  /**
   * Sends `message`; a response that cannot be written (a result nested too deep for `JSON.stringify`, which
   * the upstream may send) is answered with a JSON-RPC error instead, so its caller never waits for an
   * answer that will not come (reported as {@link UnsentAnswerError}). When the error cannot be sent
   * either (the connection is gone), the first failure stands.
   */
  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const sent = attempt(() => this.#send(message, options));
    if (!("id" in message) || "method" in message || "error" in message) return sent;
    return sent.catch(async (err: unknown) => {
      const why = err instanceof Error ? err.message : String(err);
      const error = { code: ErrorCode.InternalError, message: `the answer could not be sent: ${why}` };
      await attempt(() => this.#send({ jsonrpc: "2.0", id: message.id, error }, options)).catch(() => {
        throw err;
      });
      this.onerror?.(new UnsentAnswerError(message.id, why));
    });
  }

  #send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#direct.size > 0) {
      // as the SDK transport routes: a response by its own id, anything else by the request it relates to
      const response = "id" in message && !("method" in message);
      const id = response ? message.id : options?.relatedRequestId;
      const stream = id === undefined ? undefined : this.#direct.get(id);
      if (id !== undefined && stream !== undefined) {
        stream.write(message);
        if (response) {
          this.#direct.delete(id);
          stream.end();
        }
        return Promise.resolve();
      }
    }
    return super.send(message, options);
  }
}

/** A send that throws is a rejected promise. */
function attempt(send: () => Promise<void>): Promise<void> {
  try {
    return send();
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

/** A response that could not be written: its caller was sent a JSON-RPC error instead. */
export class UnsentAnswerError extends Error {
  constructor(id: RequestId, why: string) {
    super(`the answer to request ${JSON.stringify(id)} could not be sent (${why}): the client got an error instead`);
    this.name = "UnsentAnswerError";
  }
}

/** Where the messages of a directly answered request go (an HTTP response written as SSE). */
export interface DirectStream {
  write(message: JSONRPCMessage): void;
  end(): void;
}

/** Whether `message` is a plain `tools/call` request the fast path takes as it is (no other member). */
export function isFastCallRequest(message: unknown): message is JSONRPCRequest {
  if (!isPlainObject(message) || message["jsonrpc"] !== "2.0" || message["method"] !== "tools/call") return false;
  for (const key of Object.keys(message)) if (!["jsonrpc", "id", "method", "params"].includes(key)) return false;
  const id = message["id"];
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return false;
  return callParams(message["params"]) !== undefined;
}

/**
 * Takes a `tools/call` (or the cancellation of one it took) off the SDK server's path: the same handler
 * as the SDK route (`handleToolCall`: the one decision pipeline, consent, audit, credentials), the reply
 * sent on `transport` with the caller's id. Answers itself a request with bad params of a method the session
 * serves (-32602, {@link refusedParams}: a malformed `tools/call`, `prompts/get`, `resources/read`, …) and a
 * second `initialize` ({@link refusedInitialize}). Returns false for anything it leaves to the SDK server:
 * other requests, `acp_submit_plan`, task-augmented calls (the SDK answers those as before).
 */
export function interceptDownstream(
  proxy: AcpProxy,
  session: ProxySession,
  transport: Transport,
  message: JSONRPCMessage,
): boolean {
  if (!("method" in message)) return false;
  if ("id" in message) {
    if (message.method === "initialize") return answered(transport, refusedInitialize(session, message));
    if (message.method === "tools/call" && startCall(proxy, session, transport, message)) return true;
    // bad params are answered here, -32602 in a line (the SDK server's schema error is -32603); anything else
    // goes to the SDK server, a `tools/call` the fast path declined (task-augmented, `acp_submit_plan`) too
    return answered(transport, refusedParams(session.server, message));
  }
  if (message.method !== "notifications/cancelled") return false;
  const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
  const call = typeof requestId === "string" || typeof requestId === "number" ? session.fast.get(requestId) : undefined;
  if (call === undefined) return false;
  call.abort((message.params as { reason?: unknown }).reason);
  return true;
}

/** Sends `error` on `transport` (true: the message is answered), or false when there is none to send. */
function answered(transport: Transport, error: JSONRPCError | undefined): boolean {
  if (error === undefined) return false;
  transport
    .send(error, { relatedRequestId: error.id })
    .catch((err: unknown) => transport.onerror?.(new Error(`Failed to send response: ${String(err)}`)));
  return true;
}

function startCall(proxy: AcpProxy, session: ProxySession, transport: Transport, message: JSONRPCRequest): boolean {
  const params = callParams(message.params);
  if (params === undefined || session.fast.has(message.id)) return false;
  if (params.name === SUBMIT_PLAN_NAME && proxy.options.plans !== undefined) return false;
  const id = message.id;
  // the call's AbortSignal is made only if something asks for it (a consent wait): the relay watches `signal`
  const signal = new CallAbort();
  session.fast.set(id, signal);
  const related = { relatedRequestId: id };
  const context: CallContext = {
    get signal() {
      return signal.signal;
    },
    abort: signal,
    sendNotification: async (notification) => {
      if (signal.aborted) return;
      await session.server.notification(notification, related);
    },
    sendRequest: async (request, options) => {
      if (signal.aborted) throw new McpError(ErrorCode.ConnectionClosed, "Request was cancelled");
      return session.server.request(request, ResultSchema, { ...options, ...related });
    },
  };
  const request = { method: "tools/call", params } as CallToolRequest;
  handleToolCall(proxy, session, request, context)
    .then(checkedResult)
    .then(
      async (result) => {
        if (signal.aborted) return;
        await transport.send({ jsonrpc: "2.0", id, result }, related);
      },
      async (error: unknown) => {
        if (signal.aborted) return;
        const e = error as { code?: unknown; message?: unknown; data?: unknown };
        const code = typeof e.code === "number" && Number.isSafeInteger(e.code) ? e.code : ErrorCode.InternalError;
        const text = typeof e.message === "string" ? e.message : "Internal error";
        await transport.send(
          { jsonrpc: "2.0", id, error: { code, message: text, ...(e.data !== undefined ? { data: e.data } : {}) } },
          related,
        );
      },
    )
    .catch((err: unknown) => transport.onerror?.(new Error(`Failed to send response: ${String(err)}`)))
    .finally(() => {
      if (session.fast.get(id) === signal) session.fast.delete(id);
    });
  return true;
}

/** The params of a plain `tools/call` (name, arguments, `_meta`), or undefined for anything else. */
function callParams(value: unknown): CallToolRequest["params"] | undefined {
  if (!isPlainObject(value)) return undefined;
  for (const key of Object.keys(value)) if (key !== "name" && key !== "arguments" && key !== "_meta") return undefined;
  if (typeof value["name"] !== "string") return undefined;
  if (value["arguments"] !== undefined && !isPlainObject(value["arguments"])) return undefined;
  const meta = value["_meta"];
  if (meta !== undefined) {
    if (!isPlainObject(meta) || RELATED_TASK_META_KEY in meta) return undefined;
    const token = meta["progressToken"];
    if (token !== undefined && typeof token !== "string" && !Number.isSafeInteger(token)) return undefined;
  }
  return value as CallToolRequest["params"];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The result as the SDK server would send it: an upstream's result that is plainly well-formed (text
 * content) is passed on as it is; anything else is checked against the SDK's schema, and one that fails
 * is a JSON-RPC error, as the SDK server answers it.
 */
function checkedResult(result: CallToolResult): CallToolResult {
  if (isPlainTextResult(result)) return result;
  const parsed = CallToolResultSchema.safeParse(result);
  if (!parsed.success)
    throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${parsed.error.message}`);
  return parsed.data;
}

function isPlainTextResult(result: unknown): boolean {
  if (!isPlainObject(result)) return false;
  const { content, isError, structuredContent, _meta } = result;
  if (!Array.isArray(content)) return false;
  if (isError !== undefined && typeof isError !== "boolean") return false;
  if (structuredContent !== undefined || (_meta !== undefined && !isPlainObject(_meta))) return false;
  for (const item of content) {
    if (!isPlainObject(item) || item["type"] !== "text" || typeof item["text"] !== "string") return false;
    for (const key of Object.keys(item)) if (key !== "type" && key !== "text") return false;
  }
  return true;
}
