import { ReadBuffer, STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { JSONRPCMessageSchema, RELATED_TASK_META_KEY, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { findKeyProblem } from "./json-keys.js";

/**
 * The SDK stdio transports' line buffer (`ReadBuffer`: lines split at `\n`, a trailing `\r` dropped, the
 * same size limit and error), with one difference in how a line becomes a message: a line that is plainly
 * a well-formed request or result response — exactly the members the SDK's schema allows, an id that is a
 * string or a safe integer, params, `_meta` and result plain objects, no task metadata, no `__proto__` key
 * — is taken as `JSON.parse` gives it; every other line goes through the SDK's `JSONRPCMessageSchema` as
 * before. Every message taken plainly is one the schema accepts and gives back unchanged (a property test
 * holds the two equal), so the transport behaves the same; it only skips the schema's copy of the two
 * messages of every forwarded `tools/call` (its request in, its result from upstream), which cost more
 * than the proxy's own framing.
 */
export class PlainReadBuffer {
  #buffer: Buffer | undefined;
  readonly #maxBufferSize: number;
  readonly #answer: ((reply: JSONRPCMessage) => void) | undefined;
  readonly #refuseKeyProblems: boolean;

  /**
   * `answer`, when given, receives the JSON-RPC error answer to a line that is not a message (see
   * {@link unreadableAnswer}) before the line's error is thrown to the transport as before.
   * `refuseKeyProblems`: a line whose JSON holds a key twice in one object, or a prototype key
   * ({@link findKeyProblem}), is not a message either (a request among them is answered -32600).
   */
  constructor(
    maxBufferSize: number = STDIO_DEFAULT_MAX_BUFFER_SIZE,
    answer?: (reply: JSONRPCMessage) => void,
    refuseKeyProblems = false,
  ) {
    this.#maxBufferSize = maxBufferSize;
    this.#answer = answer;
    this.#refuseKeyProblems = refuseKeyProblems;
  }

  append(chunk: Buffer): void {
    const size = (this.#buffer?.length ?? 0) + chunk.length;
    if (size > this.#maxBufferSize) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.#maxBufferSize} bytes`);
    }
    this.#buffer = this.#buffer === undefined ? chunk : Buffer.concat([this.#buffer, chunk]);
  }

  readMessage(): JSONRPCMessage | null {
    const buffer = this.#buffer;
    if (buffer === undefined) return null;
    const index = buffer.indexOf(10);
    if (index === -1) return null;
    const end = index > 0 && buffer[index - 1] === 13 ? index - 1 : index;
    const line = buffer.toString("utf8", 0, end);
    this.#buffer = buffer.subarray(index + 1);
    if (this.#answer === undefined && !this.#refuseKeyProblems) return parseMessage(line);
    let message: JSONRPCMessage;
    try {
      message = parseMessage(line);
    } catch (err) {
      const reply = this.#answer === undefined ? null : unreadableAnswer(line);
      if (reply !== null) this.#answer?.(reply);
      throw err;
    }
    const problem = this.#refuseKeyProblems ? findKeyProblem(line) : null;
    if (problem === null) return message;
    const m = message as { method?: unknown; id?: unknown };
    // a request is answered (under the id JSON.parse read: an error answer, never a result); a
    // notification or a response is not
    if (typeof m.method === "string" && isRequestId(m.id)) {
      this.#answer?.(
        errorAnswer(m.id as string | number, INVALID_REQUEST, `Invalid Request: ambiguous JSON: ${problem}`),
      );
    }
    throw new Error(`ambiguous JSON: ${problem}`);
  }

  clear(): void {
    this.#buffer = undefined;
  }
}

/** A line as a JSON-RPC message: taken as parsed when plainly well-formed, else through the SDK's schema. */
export function parseMessage(line: string): JSONRPCMessage {
  const value: unknown = JSON.parse(line);
  return plainMessage(value) ? value : JSONRPCMessageSchema.parse(value);
}

/** JSON-RPC 2.0's error codes for what is not a message. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/**
 * The answer JSON-RPC 2.0 (§5.1) gives a line {@link parseMessage} refused, so a client with a bug hears
 * about it instead of waiting for its timeout: not JSON → -32700 with id null; a batch (MCP has none since
 * 2025-06-18), a scalar, or an object that is no valid request → -32600 with the request's id when it has a
 * valid one, else null. A line that looks like a response (`result` or `error`, no `method`) gets no
 * answer: a response is never answered.
 */
export function unreadableAnswer(line: string): JSONRPCMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return errorAnswer(null, PARSE_ERROR, "Parse error: the line is not JSON");
  }
  if (Array.isArray(value)) {
    return errorAnswer(
      null,
      INVALID_REQUEST,
      "Invalid Request: JSON-RPC batches are not supported (send one message a line)",
    );
  }
  if (!isPlainObject(value)) return errorAnswer(null, INVALID_REQUEST, "Invalid Request: a message is a JSON object");
  if (!("method" in value) && ("result" in value || "error" in value)) return null;
  const id = value["id"];
  return errorAnswer(
    isRequestId(id) ? (id as string | number) : null,
    INVALID_REQUEST,
    "Invalid Request: not a JSON-RPC 2.0 request this server takes (check `jsonrpc`, `id`, `method` and `params`)",
  );
}

function errorAnswer(id: string | number | null, code: number, message: string): JSONRPCMessage {
  // JSON-RPC's id null (the id could not be read) is outside the SDK's type, not outside the protocol
  return { jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage;
}

/**
 * Whether `value` is plainly a request (`jsonrpc`, `id`, `method`, optional `params`) or a result response
 * (`jsonrpc`, `id`, `result`) that `JSONRPCMessageSchema` accepts as it is. False means "ask the schema",
 * not "invalid": notifications, error responses and anything unusual go the SDK's way.
 */
export function plainMessage(value: unknown): value is JSONRPCMessage {
  if (!isPlainObject(value) || value["jsonrpc"] !== "2.0" || !isRequestId(value["id"])) return false;
  let members = 2;
  if ("method" in value) {
    if (typeof value["method"] !== "string") return false;
    members++;
    if ("params" in value) {
      const params = value["params"];
      if (!isPlainObject(params) || !plainMeta(params)) return false;
      members++;
    }
  } else {
    const result = value["result"];
    if (!isPlainObject(result) || "_meta" in result || Object.hasOwn(result, "__proto__")) return false;
    members++;
  }
  return Object.keys(value).length === members;
}

/** A params object without a `__proto__` key whose `_meta`, if any, is plain: a progress token at most, no task. */
function plainMeta(params: Record<string, unknown>): boolean {
  if (Object.hasOwn(params, "__proto__")) return false;
  if (!("_meta" in params)) return true;
  const meta = params["_meta"];
  if (!isPlainObject(meta) || RELATED_TASK_META_KEY in meta || Object.hasOwn(meta, "__proto__")) return false;
  return !("progressToken" in meta) || isRequestId(meta["progressToken"]);
}

function isRequestId(id: unknown): boolean {
  return typeof id === "string" || Number.isSafeInteger(id);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Gives an SDK stdio transport (server or client) the {@link PlainReadBuffer}. The SDK keeps its buffer in
 * a private field; when that field is not an SDK `ReadBuffer` (another SDK version), the transport is left
 * as it is: correct, only slower. Call before the transport starts. `answerUnreadable` (a server's
 * transport): a line that is not a message gets JSON-RPC's error answer ({@link unreadableAnswer}).
 * `refuseKeyProblems`: a line that holds a key twice in one object, or a prototype key, is refused as
 * the service's HTTP bodies are (`acp serve --stdio`: JSON.parse would decide on the last of two values).
 */
export function usePlainReadBuffer(
  transport: object,
  options: { readonly answerUnreadable?: boolean; readonly refuseKeyProblems?: boolean } = {},
): boolean {
  const t = transport as { _readBuffer?: unknown; send?: (message: JSONRPCMessage) => Promise<void> };
  const current = t._readBuffer;
  if (!(current instanceof ReadBuffer)) return false;
  const max = (current as unknown as { _maxBufferSize?: unknown })._maxBufferSize;
  const send = t.send?.bind(transport);
  const answer =
    options.answerUnreadable === true && send !== undefined
      ? (reply: JSONRPCMessage) => void send(reply).catch(() => undefined)
      : undefined;
  t._readBuffer = new PlainReadBuffer(
    typeof max === "number" ? max : STDIO_DEFAULT_MAX_BUFFER_SIZE,
    answer,
    options.refuseKeyProblems === true,
  );
  return true;
}
