import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCError, JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { echoed } from "./agent-error.js";

/** One issue of a schema, as zod reports it (the members a message is made of). */
interface SchemaIssue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly expected?: unknown;
  readonly values?: readonly unknown[];
  readonly errors?: readonly (readonly SchemaIssue[])[];
}

/** An SDK request schema, as far as a check of params uses it. */
interface RequestSchema {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: readonly SchemaIssue[] } };
}

/**
 * The requests whose params are checked before the SDK server sees them: the SDK's own schema for each, and
 * what its `params` must hold when it must hold something. Left to the SDK server, a request that failed its
 * schema failed in the protocol layer, whose error has no code: the client got -32603 (an internal error, as
 * if the proxy had broken) with a dump of every zod issue. Every method a session's server can serve is here
 * (session-handlers.ts registers them), but `ping`, whose params are anything.
 */
const CHECKED = new Map<string, { readonly schema: RequestSchema; readonly holding?: string }>([
  ["initialize", { schema: InitializeRequestSchema, holding: "`protocolVersion`, `capabilities` and `clientInfo`" }],
  ["tools/call", { schema: CallToolRequestSchema, holding: "the tool's `name`" }],
  ["tools/list", { schema: ListToolsRequestSchema }],
  ["prompts/list", { schema: ListPromptsRequestSchema }],
  ["prompts/get", { schema: GetPromptRequestSchema, holding: "the prompt's `name`" }],
  ["resources/list", { schema: ListResourcesRequestSchema }],
  ["resources/templates/list", { schema: ListResourceTemplatesRequestSchema }],
  ["resources/read", { schema: ReadResourceRequestSchema, holding: "the resource's `uri`" }],
  ["resources/subscribe", { schema: SubscribeRequestSchema, holding: "the resource's `uri`" }],
  ["resources/unsubscribe", { schema: UnsubscribeRequestSchema, holding: "the resource's `uri`" }],
  ["completion/complete", { schema: CompleteRequestSchema, holding: "a `ref` and an `argument`" }],
  ["logging/setLevel", { schema: SetLevelRequestSchema, holding: "a `level`" }],
]);

/**
 * What is wrong with the params of `request` (a method of {@link CHECKED}), in a line the agent can act on
 * (``prompts/get: `name` must be a string (got a number)``), or undefined when the SDK's schema takes them
 * (and for a method not checked). A valid request costs one `safeParse` of a small object; a `tools/call` is
 * only checked when the fast path declined it, so a well-formed one costs nothing more.
 */
export function invalidParams(request: JSONRPCRequest): string | undefined {
  const checked = CHECKED.get(request.method);
  if (checked === undefined) return undefined;
  const parsed = checked.schema.safeParse(request);
  if (parsed.success) return undefined;
  // a bad `_meta` is no JSON-RPC request: the transport refused it already
  return `${request.method}: ${problemOf(parsed.error.issues, request, checked.holding)}`;
}

/** The JSON-RPC error answering `request` for bad params (-32602, InvalidParams) with `message`. */
export function invalidParamsError(request: JSONRPCRequest, message: string): JSONRPCError {
  return { jsonrpc: "2.0", id: request.id, error: { code: ErrorCode.InvalidParams, message } };
}

/** The methods of {@link CHECKED} each session's server serves (has a handler for), by server. */
const servedChecked = new WeakMap<Server, ReadonlySet<string>>();

/**
 * The -32602 error answering a request of `server`'s client whose params are bad ({@link invalidParams}), or
 * undefined to leave the request to the SDK server: good params, a method not checked, or one the server does
 * not serve (which keeps the SDK's -32601: it was never going to be served, whatever its params).
 */
export function refusedParams(server: Server, request: JSONRPCRequest): JSONRPCError | undefined {
  if (!servedBy(server).has(request.method)) return undefined;
  const problem = invalidParams(request);
  return problem === undefined ? undefined : invalidParamsError(request, problem);
}

/**
 * Which checked methods `server` has a handler for, found once: the session's handlers are all set before it
 * connects (and depend on what the upstreams offered then). The SDK says whether a method has a handler only
 * by refusing to set another one.
 */
function servedBy(server: Server): ReadonlySet<string> {
  let served = servedChecked.get(server);
  if (served === undefined) {
    served = new Set(
      [...CHECKED.keys()].filter((method) => {
        try {
          server.assertCanSetRequestHandler(method);
          return false;
        } catch {
          return true;
        }
      }),
    );
    servedChecked.set(server, served);
  }
  return served;
}

/**
 * A schema's first issue as the words after the method: ``\`name\` must be a string (got a number)``,
 * ``\`level\` must be one of `debug`, `info`, … (got `loud`)``, else the path and zod's own message.
 * `holding` says what `params` must hold, for a request whose params are missing or no object. `at` is
 * where the issues' paths start (inside a union).
 */
function problemOf(
  issues: readonly SchemaIssue[],
  request: unknown,
  holding?: string,
  at: readonly PropertyKey[] = [],
): string {
  const issue = issues[0];
  if (issue === undefined) return "invalid params";
  const path = [...at, ...issue.path];
  const union = issue.code === "invalid_union" ? unionProblem(issue.errors ?? [], request, path) : undefined;
  if (union !== undefined) return union;
  if (issue.code === "invalid_type" && typeof issue.expected === "string") {
    const expected = EXPECTED[issue.expected] ?? `of type ${issue.expected}`;
    const isParams = path.length === 1 && path[0] === "params";
    return mustBe(path, request, isParams && holding !== undefined ? `${expected} with ${holding}` : expected);
  }
  if (issue.code === "invalid_value" && issue.values !== undefined)
    return mustBe(path, request, `one of ${listed(issue.values)}`, true);
  const where = whereOf(path);
  return `${where !== "" ? `\`${where}\`: ` : ""}${issue.message.toLowerCase()}`;
}

/**
 * What is wrong with a value that is none of a union's forms (`branches`: each form's issues). When each form
 * wants another value at the same place (its `type`), that value is none of them; else it is said of the form
 * the value came closest to (fewest issues), or of them all when the closest fail alike (each not an object);
 * else undefined (zod's own words).
 */
function unionProblem(
  branches: readonly (readonly SchemaIssue[])[],
  request: unknown,
  path: readonly PropertyKey[],
): string | undefined {
  const tags = branches.map((b) => b.find((i) => i.code === "invalid_value"));
  const [tag] = tags;
  if (tag !== undefined && tags.every((t) => t !== undefined && samePath(t.path, tag.path))) {
    const values = tags.flatMap((t) => t?.values ?? []);
    return mustBe([...path, ...tag.path], request, `one of ${listed(values)}`, true);
  }
  const fewest = Math.min(...branches.map((b) => b.length));
  const firsts = branches.filter((b) => b.length === fewest).flatMap((b) => b.slice(0, 1));
  const [first] = firsts;
  if (first === undefined || !firsts.every((i) => i.code === first.code && samePath(i.path, first.path))) {
    return undefined;
  }
  return problemOf([first], request, undefined, path);
}

function samePath(a: readonly PropertyKey[], b: readonly PropertyKey[]): boolean {
  return a.length === b.length && a.every((key, n) => key === b[n]);
}

/** What zod's `expected` of an `invalid_type` issue is called in a message. */
const EXPECTED: Readonly<Record<string, string>> = {
  object: "an object",
  record: "an object",
  array: "an array",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
};

/**
 * ``\`where\` must be what (got what it is)``, of the value at `path` in `request`: its kind, or the value
 * itself for a string when `quoted` (a wrong name among allowed ones), escaped and cut as every name the
 * agent sent.
 */
function mustBe(path: readonly PropertyKey[], request: unknown, what: string, quoted = false): string {
  let value: unknown = request;
  for (const key of path)
    value = typeof value === "object" && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  const got = quoted && typeof value === "string" ? `\`${echoed(value)}\`` : kindOf(value);
  return `\`${whereOf(path)}\` must be ${what} (got ${got})`;
}

/**
 * A path in the request as a message names it: from `params` down (`ref.name`), or `params` itself. It can
 * hold the client's own keys: escaped and cut, as every name the agent sent.
 */
function whereOf(path: readonly PropertyKey[]): string {
  const inParams = path[0] === "params" && path.length > 1 ? path.slice(1) : path;
  return echoed(inParams.map(String).join("."));
}

/** Allowed values as a message lists them: `` `debug`, `info` ``, the first eight. */
function listed(values: readonly unknown[]): string {
  const shown = values.slice(0, 8).map((v) => `\`${String(v)}\``);
  return `${shown.join(", ")}${values.length > 8 ? ", …" : ""}`;
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
  const problem = invalidParams(request);
  if (problem !== undefined) return invalidParamsError(request, problem);
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
