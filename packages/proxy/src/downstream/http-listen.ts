/**
 * The proxy's HTTP listener as the package exports it: its options, errors and defaults, and `listenHttp`,
 * which loads the listener's code (`http-listener.ts`: the MCP SDK's server transports and what they bring,
 * body decoding with every text encoding and hono's adapter, over half a megabyte bundled) when a proxy
 * first listens over HTTP. A stdio proxy never loads it.
 */
import type { AcpProxy } from "../proxy-server/acp-proxy.js";
import type { ConnectionGuardOptions } from "./connection-guard.js";
import type { PublicUrl } from "./public-url.js";

/** Options of the downstream HTTP listener. */
export interface HttpListenOptions {
  /** 0 picks a free port. */
  readonly port: number;
  /**
   * Default 127.0.0.1. Anything beyond loopback requires `bearerToken` or `agentTokens`, and, as the listener
   * speaks plain HTTP, an `https:` `publicUrl` (TLS ends in front of it) or `insecurePlainHttp`.
   */
  readonly bind?: string;
  /**
   * Listen beyond loopback over plain HTTP with no TLS in front: tokens and calls cross the network in clear
   * text (`acp proxy --insecure-plain-http`, for a network the operator trusts).
   */
  readonly insecurePlainHttp?: boolean;
  /** The token every client may use (`proxy.bearer_token`, `ACP_PROXY_TOKEN`); its sessions' agent is the client's name. */
  readonly bearerToken?: string;
  /**
   * Tokens that name their agent (name → token; `proxy.agent_tokens`): a session opened with one is that
   * agent's, whatever name its client gives, and only that token may use it. With any set, a token is required.
   */
  readonly agentTokens?: ReadonlyMap<string, string>;
  /**
   * The origin a reverse proxy in front serves the listener at ({@link parsePublicUrl}): a loopback listener
   * then also takes requests addressed to its host and coming from its origin.
   */
  readonly publicUrl?: PublicUrl;
  /**
   * A request whose headers have not all arrived this long after it began is answered 408 and its
   * connection closed (a slow-loris client), ms; default 15 s.
   */
  readonly headersTimeoutMs?: number;
  /**
   * The same for a request whose body has not all arrived, ms; default 30 s. Only the request: the answer
   * (a call's event stream, a session's GET stream) may take as long as it takes.
   */
  readonly requestTimeoutMs?: number;
  /** Largest request body accepted, bytes; default 4 MiB. */
  readonly maxBodyBytes?: number;
  /**
   * A streamable-HTTP session with no stream open and no request for this long is closed, ms; default
   * 30 minutes. (Clients that go away without `DELETE` would otherwise keep their session for ever.)
   */
  readonly idleSessionMs?: number;
  /**
   * Most sessions open at once (streamable HTTP and HTTP+SSE together); default 256. An agent with a token
   * of its own may hold at most a quarter of them, so one agent cannot take every session from the others.
   * Beyond either, a new session is refused with 429 (each session holds a server, a session runtime and
   * what its agent read).
   */
  readonly maxSessions?: number;
  /**
   * Connections open at once (default 1,024) and what a client may leave unread (default 64 MiB a connection,
   * nothing read for 60 s): see {@link guardConnections}.
   */
  readonly connections?: Partial<Omit<ConnectionGuardOptions, "log">>;
}

/** Connections the listener keeps open at once, by default. */
export const DEFAULT_MAX_CONNECTIONS = 1024;

/** A running listener. */
export interface HttpListener {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Why the listener refused to start. */
export class HttpListenError extends Error {
  readonly code: string;
  constructor(issue: { readonly code: string; readonly message: string }) {
    super(issue.message);
    this.name = "HttpListenError";
    this.code = issue.code;
  }
}

/**
 * Why the proxy does not listen on `bind` (beyond loopback) over plain HTTP, and what to do instead: its bearer
 * tokens, every call and every result would cross the network readable by anyone on the path.
 */
export function plainHttpRefusal(bind: string): string {
  return (
    `refusing to listen on \`${bind}\` over plain HTTP: the bearer token and every call and result would cross ` +
    "the network in clear text; keep --bind 127.0.0.1 behind a TLS-terminating proxy (--public-url https://…), " +
    "give an https:// --public-url when the proxy in front ends TLS, or accept the risk on a network you trust " +
    "with --insecure-plain-http (or proxy.insecure_plain_http: true)"
  );
}

/**
 * Serves the proxy over HTTP: streamable HTTP at `/mcp`, and the older HTTP+SSE at `/sse` (GET, the
 * event stream) and `/messages` (POST). One MCP session per client, each with its own downstream server.
 */
export async function listenHttp(proxy: AcpProxy, options: HttpListenOptions): Promise<HttpListener> {
  const { openHttpListener } = await import("./http-listener.js");
  return openHttpListener(proxy, options);
}

/** What a client may take to send a request's headers, and the whole request, by default (ms). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 15_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Thirty minutes. */
export const DEFAULT_IDLE_SESSION_MS = 30 * 60 * 1000;

/** Sessions open at once, by default. */
export const DEFAULT_MAX_SESSIONS = 256;
