import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { armSseKeepAlive, DEFAULT_SSE_KEEP_ALIVE_MS } from "@modelcontextprotocol/sdk/server/sseKeepAlive.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import type { AcpProxy } from "../proxy-server/acp-proxy.js";
import { isFastCallRequest, type DirectStream } from "../proxy-server/fast-path.js";
import { guardConnections } from "./connection-guard.js";
import {
  createBearerIdentity,
  isLocalOrigin,
  isLoopbackAddress,
  isLoopbackHost,
  type BearerIdentity,
} from "./bearer-auth.js";
import type { PublicUrl } from "./public-url.js";
import { refusesPlainHttp } from "./plain-http.js";
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_IDLE_SESSION_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  HttpListenError,
  plainHttpRefusal,
  type HttpListener,
  type HttpListenOptions,
} from "./http-listen.js";

type Session = StreamableHTTPServerTransport | SSEServerTransport;

/** {@link listenHttp}'s work, loaded when a proxy first listens over HTTP. */
export async function openHttpListener(proxy: AcpProxy, options: HttpListenOptions): Promise<HttpListener> {
  const bind = options.bind ?? "127.0.0.1";
  const loopback = isLoopbackAddress(bind);
  const agentTokens = options.agentTokens ?? new Map<string, string>();
  if (!loopback && (options.bearerToken === undefined || options.bearerToken === "") && agentTokens.size === 0) {
    throw new HttpListenError({
      code: "proxy_bearer_token_required",
      message: `refusing to listen on \`${bind}\` without a bearer token (set proxy.bearer_token or ACP_PROXY_TOKEN)`,
    });
  }
  const tls = options.publicUrl?.https === true;
  if (refusesPlainHttp({ bind, tls, insecurePlainHttp: options.insecurePlainHttp === true })) {
    throw new HttpListenError({ code: "proxy_plain_http_refused", message: plainHttpRefusal(bind) });
  }
  const sessions = new Map<string, Session>();
  const owners = new Map<string, string | null>();
  const activity = new SessionActivity(options.idleSessionMs ?? DEFAULT_IDLE_SESSION_MS);
  const identify = createBearerIdentity(options.bearerToken, agentTokens);
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const listening: Listening = { sessions, owners, activity, identify, room: new SessionRoom(maxSessions, owners) };
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = Math.max(headersTimeout, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
  const limits = {
    headersTimeout,
    requestTimeout,
    // Node enforces both when it checks the connections: every second (or sooner), not every 30 s
    connectionsCheckingInterval: Math.max(5, Math.min(1_000, Math.floor(headersTimeout / 2))),
  };
  const http = createServer(limits, (req, res) => {
    handle(proxy, listening, options, loopback, req, res).catch((err: unknown) => {
      proxy.log(`http: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) sendJsonError(res, 500, -32603, "internal error");
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        new HttpListenError({
          code: "proxy_listen_failed",
          message: `cannot listen on \`${bind}:${options.port}\`: ${err.code ?? err.message}`,
        }),
      ),
    );
    http.listen(options.port, bind, () => resolve());
  });
  const stopGuard = guardConnections(http, {
    maxConnections: DEFAULT_MAX_CONNECTIONS,
    ...options.connections,
    log: (line) => proxy.log(line),
  });
  const port = (http.address() as AddressInfo).port;
  const host = bind.includes(":") ? `[${bind}]` : bind;
  const reaper = activity.startReaping((id) => {
    const transport = sessions.get(id);
    if (transport === undefined) return;
    proxy.log(`http: session \`${id}\` closed: idle, no stream open`);
    void transport.close();
  });
  return {
    url: `http://${host}:${port}`,
    port,
    close: () => {
      clearInterval(reaper);
      stopGuard();
      return closeAll(http, sessions);
    },
  };
}

/**
 * The room for new sessions: open ones (`owners`, by the token that opened them) and those being opened.
 * A named agent may hold a quarter of the room at most; the shared token only the whole.
 */
class SessionRoom {
  #opening = 0;
  readonly #openingBy = new Map<string, number>();
  constructor(
    readonly max: number,
    readonly owners: ReadonlyMap<string, string | null>,
  ) {}

  get perAgent(): number {
    return Math.max(1, Math.floor(this.max / 4));
  }

  /** Why a new session of `caller` is refused, or undefined: there is room (then it is counted as opening). */
  take(caller: Caller): string | undefined {
    if (this.owners.size + this.#opening >= this.max) {
      return `too many sessions: ${this.max} are open (proxy.max_sessions); close one (DELETE /mcp) or wait for idle ones to close`;
    }
    if (caller !== null) {
      let held = this.#openingBy.get(caller) ?? 0;
      for (const owner of this.owners.values()) if (owner === caller) held++;
      if (held >= this.perAgent) {
        return `too many sessions for agent \`${caller}\`: it holds ${held}, a quarter of proxy.max_sessions (${this.max}); close one (DELETE /mcp)`;
      }
      this.#openingBy.set(caller, (this.#openingBy.get(caller) ?? 0) + 1);
    }
    this.#opening++;
    return undefined;
  }

  /** The session `take` counted is open (in `owners`) or failed to open. */
  release(caller: Caller): void {
    this.#opening--;
    if (caller === null) return;
    const left = (this.#openingBy.get(caller) ?? 1) - 1;
    if (left > 0) this.#openingBy.set(caller, left);
    else this.#openingBy.delete(caller);
  }
}

interface Listening {
  readonly sessions: Map<string, Session>;
  /** The agent whose named token opened each session (null: the shared token, or no token). */
  readonly owners: Map<string, string | null>;
  readonly activity: SessionActivity;
  readonly identify: (header: string | string[] | undefined) => BearerIdentity;
  readonly room: SessionRoom;
}

/** The caller's agent (null: shared token or none), after the token check; undefined once refused. */
type Caller = string | null;

/**
 * Whether `caller` may use session `id`: only the token that opened a session may use it, so one agent's
 * calls are never made (and audited) under another's session. Answers 403 otherwise.
 */
function mayUse(listening: Listening, id: string, caller: Caller, res: ServerResponse): boolean {
  const owner = listening.owners.get(id);
  if (owner === undefined || owner === caller) return true;
  sendJsonError(res, 403, -32001, "forbidden: this session was opened with another token");
  return false;
}

/** Open responses and the last request of each streamable-HTTP session (to close the idle ones). */
class SessionActivity {
  readonly #byId = new Map<string, { open: number; last: number }>();
  constructor(readonly idleMs: number) {}

  /** One request of session `id` is being answered on `res`. */
  track(id: string, res: ServerResponse): void {
    const entry = this.#byId.get(id) ?? { open: 0, last: Date.now() };
    this.#byId.set(id, entry);
    entry.open += 1;
    entry.last = Date.now();
    res.once("close", () => {
      entry.open -= 1;
      entry.last = Date.now();
    });
  }

  forget(id: string): void {
    this.#byId.delete(id);
  }

  /** Checks now and then; `close` gets each session idle for longer than the limit. */
  startReaping(close: (id: string) => void): NodeJS.Timeout {
    const timer = setInterval(
      () => {
        const now = Date.now();
        for (const [id, entry] of this.#byId) {
          if (entry.open > 0 || now - entry.last <= this.idleMs) continue;
          this.#byId.delete(id);
          close(id);
        }
      },
      Math.max(10, Math.min(this.idleMs / 2, 60_000)),
    );
    timer.unref();
    return timer;
  }
}

async function handle(
  proxy: AcpProxy,
  listening: Listening,
  options: HttpListenOptions,
  loopback: boolean,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (loopback && !isLocalRequest(req, options.publicUrl)) {
    const or = options.publicUrl === undefined ? " (behind a reverse proxy: set --public-url)" : "";
    return sendJsonError(res, 403, -32000, `forbidden: host or origin is not local${or}`);
  }
  const check = listening.identify(req.headers.authorization);
  if (!check.ok) {
    if (check.status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="acp-proxy"');
    return sendJsonError(res, check.status, -32001, check.message);
  }
  const caller: Caller = check.agent ?? null;
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path === "/mcp") return handleStreamable(proxy, listening, options, caller, req, res);
  if (path === "/sse" && req.method === "GET") return openSse(proxy, listening, caller, res);
  if (path === "/messages" && req.method === "POST") return postSse(listening, options, caller, req, res);
  return sendJsonError(res, 404, -32601, `not found: \`${path}\` (use /mcp, or /sse and /messages)`);
}

async function handleStreamable(
  proxy: AcpProxy,
  listening: Listening,
  options: HttpListenOptions,
  caller: Caller,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { sessions, activity } = listening;
  const sessionId = req.headers["mcp-session-id"];
  const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
  if (existing !== undefined && !mayUse(listening, sessionId as string, caller, res)) return;
  const body = req.method === "POST" ? await readJson(req, res, options.maxBodyBytes ?? 4 * 1024 * 1024) : undefined;
  if (body === READ_FAILED) return;
  if (existing instanceof StreamableHTTPServerTransport) {
    activity.track(sessionId as string, res);
    if (req.method === "POST") {
      closeSessionIfDropped(existing, res);
      if (answerCallDirectly(proxy, sessionId as string, req, res, body)) return;
    }
    return existing.handleRequest(req, res, body);
  }
  if (existing !== undefined) return sendJsonError(res, 400, -32000, "session uses the sse transport");
  if (typeof sessionId === "string") return sendJsonError(res, 404, -32001, "session not found");
  if (req.method !== "POST" || !isInitializeRequest(body)) {
    return sendJsonError(res, 400, -32000, "bad request: no valid session id (initialize first)");
  }
  const full = listening.room.take(caller);
  if (full !== undefined) return sendJsonError(res, 429, -32000, full);
  try {
    await openStreamable(proxy, listening, caller, req, res, body);
  } finally {
    listening.room.release(caller);
  }
}

async function openStreamable(
  proxy: AcpProxy,
  listening: Listening,
  caller: Caller,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const { sessions, owners, activity } = listening;
  const id = randomUUID();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => id,
    onsessioninitialized: () => {
      sessions.set(id, transport);
      owners.set(id, caller);
      activity.track(id, res);
    },
  });
  transport.onclose = () => {
    sessions.delete(id);
    owners.delete(id);
    activity.forget(id);
  };
  await proxy.connect(transport, id, caller === null ? {} : { agent: caller });
  closeSessionIfDropped(transport, res);
  await transport.handleRequest(req, res, body);
  // an initialize the transport refused (Accept, Content-Type, protocol version) opened no session: its
  // server is closed now, or every such request would leave one behind, uncounted and never reaped
  if (!sessions.has(id)) await transport.close();
}

/**
 * A POSTed plain `tools/call` of an initialized streamable-HTTP session, answered on `res` without the SDK
 * transport's conversion of the Node request and response to Web ones (the largest CPU cost of a call
 * over HTTP): the same checks as the SDK transport (Accept, Content-Type, protocol version; the session
 * was found by its header), the same SSE response (headers, `event: message` frames, keep-alive comments)
 * carrying the call's progress, its requests to the client and its response, ended after the response.
 * False for anything else, or any doubt: the SDK transport answers it as before.
 */
function answerCallDirectly(
  proxy: AcpProxy,
  sessionId: string,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): boolean {
  if (!isFastCallRequest(body)) return false;
  const downstream = proxy.sessions.get(sessionId)?.downstream;
  if (downstream === undefined) return false;
  const accept = req.headers.accept;
  if (accept === undefined || !accept.includes("application/json") || !accept.includes("text/event-stream"))
    return false;
  if (!isJsonContentType(req.headers["content-type"] ?? null)) return false;
  const version = req.headers["mcp-protocol-version"];
  if (version !== undefined && (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)))
    return false;
  // a request with this id already answered on a stream of its own: the SDK transport decides (as before)
  if (downstream.answersDirectly(body.id)) return false;
  const stream = sseResponse(res, sessionId);
  res.once("close", () => {
    stream.end();
    downstream.dropDirect(body.id, stream);
  });
  const requestInfo = {
    headers: Object.fromEntries(Object.entries(req.headers).filter(([, v]) => v !== undefined)) as Record<
      string,
      string | string[]
    >,
    url: new URL(req.url ?? "/", "http://localhost"),
  };
  downstream.deliverDirect(body, stream, { requestInfo });
  return true;
}

/** An SSE response as the SDK transport writes one for a POST (without an event store: no event ids). */
function sseResponse(res: ServerResponse, sessionId: string): DirectStream {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "mcp-session-id": sessionId,
  });
  res.flushHeaders();
  const keepAlive = armSseKeepAlive(DEFAULT_SSE_KEEP_ALIVE_MS, () => {
    if (!res.writableEnded) res.write(": keepalive\n\n");
  });
  let ended = false;
  return {
    write: (message) => {
      if (!ended && !res.writableEnded) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    },
    end: () => {
      if (ended) return;
      ended = true;
      if (keepAlive !== undefined) clearInterval(keepAlive);
      if (!res.writableEnded) res.end();
    },
  };
}

/** A client that drops a response stream while a call is pending has gone: close its session (withdraws). */
function closeSessionIfDropped(transport: StreamableHTTPServerTransport, res: ServerResponse): void {
  res.once("close", () => {
    if (!res.writableFinished) void transport.close();
  });
}

async function openSse(proxy: AcpProxy, listening: Listening, caller: Caller, res: ServerResponse): Promise<void> {
  const { sessions, owners, room } = listening;
  const full = room.take(caller);
  if (full !== undefined) return sendJsonError(res, 429, -32000, full);
  const transport = new SSEServerTransport("/messages", res);
  sessions.set(transport.sessionId, transport);
  owners.set(transport.sessionId, caller);
  room.release(caller);
  transport.onclose = () => {
    sessions.delete(transport.sessionId);
    owners.delete(transport.sessionId);
  };
  await proxy.connect(transport, transport.sessionId, caller === null ? {} : { agent: caller });
}

async function postSse(
  listening: Listening,
  options: HttpListenOptions,
  caller: Caller,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const id = new URL(req.url ?? "/", "http://localhost").searchParams.get("sessionId") ?? "";
  const transport = listening.sessions.get(id);
  if (!(transport instanceof SSEServerTransport)) return sendJsonError(res, 404, -32001, "session not found");
  if (!mayUse(listening, id, caller, res)) return;
  const body = await readJson(req, res, options.maxBodyBytes ?? 4 * 1024 * 1024);
  if (body === READ_FAILED) return;
  return transport.handlePostMessage(req, res, body);
}

const READ_FAILED = Symbol("read failed");

async function readJson(req: IncomingMessage, res: ServerResponse, max: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      sendJsonError(res, 413, -32600, `request body larger than ${max} bytes`);
      req.destroy();
      return READ_FAILED;
    }
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    sendJsonError(res, 400, -32700, "parse error: the body is not json");
    return READ_FAILED;
  }
}

/**
 * Whether a request to a loopback listener is addressed to it and comes from a local page (a DNS-rebinding
 * guard): a loopback `Host` and `Origin`, or the public URL's host and origin (a reverse proxy in front).
 */
function isLocalRequest(req: IncomingMessage, publicUrl: PublicUrl | undefined): boolean {
  const { host, origin } = req.headers;
  const hostOk = isLoopbackHost(host) || (publicUrl !== undefined && host === publicUrl.host);
  return hostOk && isLocalOrigin(origin, publicUrl?.origin);
}

function sendJsonError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

async function closeAll(http: HttpServer, sessions: Map<string, Session>): Promise<void> {
  await Promise.all([...sessions.values()].map((s) => s.close().catch(() => undefined)));
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
}
