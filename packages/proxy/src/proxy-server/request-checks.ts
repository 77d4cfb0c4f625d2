import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCError, JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { echoed } from "./agent-error.js";

/**
 * What is wrong with the params of a `tools/call` (`request.params`), in a line the agent can act on
 * (``tools/call: `arguments` must be an object (got a string)``), or undefined when the SDK's schema takes
 * them. Left to the SDK server, such a call failed its schema in the protocol layer, whose error has no code:
 * the client got -32603 (an internal error, as if the proxy had broken) with a dump of every zod issue.
 * Only run on a call the fast path declined: a well-formed one costs nothing more.
 */
export function invalidCallParams(request: JSONRPCRequest): string | undefined {
  const params: unknown = request.params;
  if (!isRecord(params))
    return `tools/call: \`params\` must be an object with the tool's \`name\` (got ${kindOf(params)})`;
  if (typeof params["name"] !== "string")
    return `tools/call: \`name\` must be a string (got ${kindOf(params["name"])})`;
  const args = params["arguments"];
  if (args !== undefined && !isRecord(args)) return `tools/call: \`arguments\` must be an object (got ${kindOf(args)})`;
  const parsed = CallToolRequestSchema.safeParse(request);
  // anything else the schema refuses (a `task` that is not one): its first issue, where and what (a bad
  // `_meta` is no JSON-RPC request: the transport refused it already)
  return parsed.success ? undefined : firstIssue("tools/call", parsed.error.issues);
}

/** A schema's first issue as a line: ``initialize: `clientInfo.name`: invalid input: expected string``. */
function firstIssue(method: string, issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const issue = issues[0];
  const path = issue?.path ?? [];
  // the path can hold the client's own keys: quoted back escaped and cut, as every name the agent sent
  const where = echoed((path[0] === "params" ? path.slice(1) : path).map(String).join("."));
  return `${method}: ${where !== "" ? `\`${where}\`: ` : ""}${(issue?.message ?? "invalid params").toLowerCase()}`;
}

/** The JSON-RPC error answering `request` for bad params (-32602, InvalidParams) with `message`. */
export function invalidParamsError(request: JSONRPCRequest, message: string): JSONRPCError {
  return { jsonrpc: "2.0", id: request.id, error: { code: ErrorCode.InvalidParams, message } };
}

/** Sessions whose client has sent a well-formed `initialize` (the SDK server answered it). */
const initialized = new WeakSet<object>();

/**
 * The error answering an `initialize` on `session` that is not served, or undefined for the first well-formed
 * one (then noted). A second one is -32600 (InvalidRequest): a session is initialized once (MCP lifecycle), and
 * answered again the SDK server would take the new `clientInfo`, so the name the proxy decides and audits calls
 * under (the client's, when no token names the agent) would change in the middle of the session. The SDK's
 * streamable HTTP transport refuses it the same way before the server sees it; on stdio nothing did. One with
 * bad params is -32602 in a line (the SDK server's was -32603 with a schema dump) and leaves the session
 * uninitialized, so a client can send a good one after it.
 */
export function refusedInitialize(session: object, request: JSONRPCRequest): JSONRPCError | undefined {
  if (initialized.has(session)) {
    const message =
      "initialize: this session is already initialized (an MCP session is initialized once: open a new one)";
    return { jsonrpc: "2.0", id: request.id, error: { code: ErrorCode.InvalidRequest, message } };
  }
  const parsed = InitializeRequestSchema.safeParse(request);
  if (!parsed.success) return invalidParamsError(request, firstIssue("initialize", parsed.error.issues));
  initialized.add(session);
  return undefined;
}

/** What a value is, as a message names it: `a string`, `an array`, `null`. */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
