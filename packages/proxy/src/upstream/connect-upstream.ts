import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { UpstreamSpec } from "./upstream-spec.js";

/** The proxy's name and version as upstream servers see it. */
export const PROXY_CLIENT_INFO = { name: "acp-proxy", version: "0.1.0" } as const;

/** Hooks the proxy installs on each upstream client before it connects. */
export interface UpstreamHooks {
  /** Prepares the client (request and notification handlers) before `connect`. */
  readonly prepare: (client: Client) => void;
  /** One line of the upstream's stderr (stdio upstreams). */
  readonly onStderrLine?: (line: string) => void;
}

/** A connected upstream: the SDK client and the transport kind actually used. */
export interface UpstreamConnection {
  readonly client: Client;
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
  if (spec.transport === "stdio") {
    const transport = new StdioClientTransport({
      command: spec.command,
      args: [...spec.args],
      env: { ...getDefaultEnvironment(), ...(spec.env ?? {}) },
      stderr: "pipe",
      ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
    });
    pipeStderr(transport, hooks.onStderrLine);
    return { client: await connectClient(transport, hooks, timeoutMs), transport: "stdio" };
  }
  const url = new URL(spec.url);
  if (spec.transport === "sse") {
    return { client: await connectClient(new SSEClientTransport(url), hooks, timeoutMs), transport: "sse" };
  }
  try {
    return {
      client: await connectClient(new StreamableHTTPClientTransport(url), hooks, timeoutMs),
      transport: "streamable-http",
    };
  } catch (streamableError) {
    try {
      return { client: await connectClient(new SSEClientTransport(url), hooks, timeoutMs), transport: "sse" };
    } catch {
      throw streamableError;
    }
  }
}

async function connectClient(transport: Transport, hooks: UpstreamHooks, timeoutMs: number): Promise<Client> {
  const client = new Client(PROXY_CLIENT_INFO, { capabilities: { sampling: {}, elicitation: { form: {} } } });
  hooks.prepare(client);
  try {
    await client.connect(transport, { timeout: timeoutMs });
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
  return client;
}

function pipeStderr(transport: StdioClientTransport, onLine: ((line: string) => void) | undefined): void {
  const stream = transport.stderr;
  if (stream === null) return;
  let buffered = "";
  stream.on("data", (chunk: Buffer | string) => {
    buffered += chunk.toString();
    let index: number;
    while ((index = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, index).replace(/\r$/, "");
      buffered = buffered.slice(index + 1);
      if (line !== "") onLine?.(line);
    }
    if (buffered.length > 64_000) buffered = buffered.slice(-64_000);
  });
}
