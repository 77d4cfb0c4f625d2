import type { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createRedactor, NO_PATTERNS, redactSecrets } from "@acp/core";
import type { UpstreamCredentials, UpstreamSpec } from "./upstream-spec.js";
import { RELAY_ID_PREFIX, UpstreamRelay } from "./upstream-relay.js";
import { createAbortIsolatingFetch, RequestCarriers } from "./abort-isolating-fetch.js";
import { usePlainReadBuffer } from "../transport/plain-read-buffer.js";
import { budgetLines, DEFAULT_LINE_BURST, DEFAULT_LINES_PER_SECOND } from "./line-budget.js";

/** The proxy's name and version as upstream servers see it. */
export const PROXY_CLIENT_INFO = { name: "acp-proxy", version: "0.1.0" } as const;

/** Hooks the proxy installs on each upstream client before it connects. */
export interface UpstreamHooks {
  /** Prepares the client (request and notification handlers) before `connect`. */
  readonly prepare: (client: Client) => void;
  /** One line of the upstream's stderr (stdio upstreams), with injected credential values redacted. */
  readonly onStderrLine?: (line: string) => void;
  /** Credentials for the transport: headers of a URL upstream, environment of a spawned one. */
  readonly credentials?: UpstreamCredentials;
  /**
   * Secret values put anywhere else (the vault entries injected into calls' arguments), read on every
   * message: scrubbed, with the transport's own credentials, from everything the upstream sends.
   */
  readonly secretValues?: () => readonly string[];
}

/** A connected upstream: the SDK client, the relay beside it and the transport kind actually used. */
export interface UpstreamConnection {
  readonly client: Client;
  /** The client's transport, through which the proxy also relays accepted `tools/call`s (see {@link UpstreamRelay}). */
  readonly relay: UpstreamRelay;
  readonly transport: "stdio" | "streamable-http" | "sse";
}

/**
 * Connects to one upstream MCP server with the official SDK client: stdio spawns the command; a URL
 * tries streamable HTTP and falls back to the older HTTP+SSE transport when that fails.
 *
 * The proxy declares sampling and elicitation to upstreams (forwarded to the agent's client). It does not
 * declare roots: a server's allowed roots stay what its command line says, never what the agent sends.
 */
export async function connectUpstream(
  spec: UpstreamSpec,
  hooks: UpstreamHooks,
  timeoutMs: number,
): Promise<UpstreamConnection> {
  const own = credentialValues(hooks.credentials);
  let more: readonly string[] = [];
  let all = own;
  const secrets = (): readonly string[] => {
    const now = hooks.secretValues?.() ?? more;
    if (now !== more) {
      more = now;
      all = now.length === 0 ? own : [...own, ...now];
    }
    return all;
  };
  if (spec.transport === "stdio") {
    const transport = new StdioClientTransport({
      command: spec.command,
      args: [...spec.args],
      // the child's own environment: ACP's process environment is never changed
      env: { ...getDefaultEnvironment(), ...(spec.env ?? {}), ...(hooks.credentials?.env ?? {}) },
      stderr: "pipe",
      ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
    });
    usePlainReadBuffer(transport);
    closeOnStdoutEnd(transport);
    pipeStderr(transport, hooks.onStderrLine, secrets);
    return { ...(await connectClient(transport, hooks, timeoutMs, secrets)), transport: "stdio" };
  }
  const url = new URL(spec.url);
  // the HTTP client transports (and the event-stream parser) are loaded by a proxy with a URL upstream only
  const [{ SSEClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/sse.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  ]);
  const headers = hooks.credentials?.headers;
  // every request gets an abort signal of its own: the SDK's one per connection collects a listener per call
  // a call given up on (answered, timed out, cancelled) ends its HTTP request's answer stream
  const carriers = new RequestCarriers(new RegExp(`^${RELAY_ID_PREFIX}[0-9]+$`));
  const options = {
    fetch: createAbortIsolatingFetch(fetch, carriers),
    ...(headers !== undefined && Object.keys(headers).length > 0 ? { requestInit: { headers: { ...headers } } } : {}),
  };
  // over HTTP+SSE one event stream carries every answer: when it ends, the calls in flight fail at once
  const sseOptions = { ...options, fetch: createAbortIsolatingFetch(fetch, carriers, { sse: true }) };
  if (spec.transport === "sse") {
    return {
      ...(await connectClient(new SSEClientTransport(url, sseOptions), hooks, timeoutMs, secrets, carriers)),
      transport: "sse",
    };
  }
  try {
    return {
      ...(await connectClient(new StreamableHTTPClientTransport(url, options), hooks, timeoutMs, secrets, carriers)),
      transport: "streamable-http",
    };
  } catch (streamableError) {
    try {
      return {
        ...(await connectClient(new SSEClientTransport(url, sseOptions), hooks, timeoutMs, secrets, carriers)),
        transport: "sse",
      };
    } catch {
      throw streamableError;
    }
  }
}

/** Every injected value (header and environment), for scrubbing what the upstream says back. */
function credentialValues(credentials: UpstreamCredentials | undefined): readonly string[] {
  if (credentials === undefined) return [];
  return [...Object.values(credentials.headers ?? {}), ...Object.values(credentials.env ?? {})];
}

/** A copy of `text` with every injected value replaced by `[REDACTED]`. */
export function scrubCredentials(text: string, secrets: readonly string[]): string {
  return secrets.length === 0 ? text : (redactSecrets(text, secrets, NO_PATTERNS) as string);
}

/** The members of a JSON-RPC message that carry the upstream's words (`jsonrpc` and `id` are left as they are). */
const SPOKEN = ["method", "params", "result", "error"] as const;

/**
 * Scrubs every message an upstream sends of the secret values `secrets()` names (read per message: the
 * vault opens on first use): a result, a JSON-RPC error (message and data), a log line, a progress message,
 * a sampling or elicitation request, a listing. The same message comes back when it holds none.
 */
export function createMessageScrubber(secrets: () => readonly string[]): (message: JSONRPCMessage) => JSONRPCMessage {
  const redact = createRedactor(NO_PATTERNS, { secrets });
  return (message) => {
    if (secrets().length === 0) return message;
    const record = message as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const key of SPOKEN) {
      if (!(key in record)) continue;
      const next = redact(record[key]);
      if (next !== record[key]) (out ??= { ...record })[key] = next;
    }
    return (out ?? message) as JSONRPCMessage;
  };
}

async function connectClient(
  transport: Transport,
  hooks: UpstreamHooks,
  timeoutMs: number,
  secrets: () => readonly string[],
  carriers?: RequestCarriers,
): Promise<{ client: Client; relay: UpstreamRelay }> {
  const client = new Client(PROXY_CLIENT_INFO, { capabilities: { sampling: {}, elicitation: { form: {} } } });
  hooks.prepare(client);
  // what the upstream says reaches the proxy, and through it the agent, without an injected value in it
  const settled = carriers === undefined ? undefined : (id: string): void => carriers.end(id);
  const relay = new UpstreamRelay(transport, createMessageScrubber(secrets), settled);
  // a call whose HTTP answer can no longer answer it fails at once, not at its timeout
  carriers?.listen({
    fail: (id, why) => relay.failRequest(id, why),
    failAll: (why) => relay.failAll(why),
    say: (what) => relay.onerror?.(new Error(scrubCredentials(what, secrets()))),
  });
  try {
    await client.connect(relay, { timeout: timeoutMs });
  } catch (err) {
    await client.close().catch(() => undefined);
    if (secrets().length === 0) throw err;
    // an upstream (or a proxy in between) may echo a header back in its error
    throw new Error(scrubCredentials(err instanceof Error ? err.message : String(err), secrets()));
  }
  return { client, relay };
}

/**
 * A server that closes its stdout can answer nothing more, even if its process goes on running: the SDK
 * transport waits for the process to exit, so every call would wait for its timeout. The connection is
 * closed as soon as stdout ends (the process is stopped as the SDK stops it), which fails the calls in
 * flight and reports the server stopped. Left as it is when the SDK keeps its process elsewhere.
 */
function closeOnStdoutEnd(transport: StdioClientTransport): void {
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    const stdout = (transport as unknown as { _process?: { stdout?: Readable | null } })._process?.stdout;
    if (stdout === undefined || stdout === null) return;
    const close = (): void => void transport.close().catch(() => undefined);
    if (stdout.readableEnded) close();
    else stdout.once("end", close);
  };
}

function pipeStderr(
  transport: StdioClientTransport,
  onLine: ((line: string) => void) | undefined,
  secrets: () => readonly string[],
): void {
  const stream = transport.stderr;
  if (stream === null) return;
  // read even when nobody hears it: a child whose stderr pipe fills stops at its next write
  const say =
    onLine === undefined
      ? () => undefined
      : budgetLines(
          onLine,
          (count) =>
            `(${count} more line(s) of its stderr not shown: over ${DEFAULT_LINE_BURST} at once or ${DEFAULT_LINES_PER_SECOND} a second)`,
        );
  let buffered = "";
  stream.on("data", (chunk: Buffer | string) => {
    buffered += chunk.toString();
    let index: number;
    while ((index = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, index).replace(/\r$/, "");
      buffered = buffered.slice(index + 1);
      if (line !== "") say(scrubCredentials(line, secrets()));
    }
    if (buffered.length > 64_000) buffered = buffered.slice(-64_000);
  });
}
