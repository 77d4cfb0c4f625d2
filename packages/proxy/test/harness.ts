import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { ActionRequest, Decision, Route } from "@acp/core";
import {
  createProxy,
  serveStdio,
  type AcpProxy,
  type AcpProxyOptions,
  type AuditSink,
  type ConsentAsk,
  type ConsentBroker,
  type ConsentOutcome,
  type Decide,
  type UpstreamSpec,
} from "../src/index.js";

/** The repository root. */
export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const bin = (name: string): string => `${ROOT}node_modules/.bin/${name}`;

/** Real upstream servers from npm, over stdio. */
export const EVERYTHING: UpstreamSpec = {
  name: "everything",
  transport: "stdio",
  command: bin("mcp-server-everything"),
  args: [],
};
export const MEMORY: UpstreamSpec = { name: "memory", transport: "stdio", command: bin("mcp-server-memory"), args: [] };
export function filesystem(dir: string): UpstreamSpec {
  return { name: "filesystem", transport: "stdio", command: bin("mcp-server-filesystem"), args: [dir] };
}
/** The fixture server (echo, crash, hang, transfer with a description from the environment). */
export function fixture(name = "fixture", description?: string): UpstreamSpec {
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args: [fileURLToPath(new URL("./fixtures/fixture-server.mjs", import.meta.url))],
    ...(description !== undefined ? { env: { FIXTURE_DESCRIPTION: description } } : {}),
  };
}

/** A decision with the given route and rule. */
export function decision(route: Route, rule: string | null = null, extra: Partial<Decision> = {}): Decision {
  return {
    route,
    action: route === "accept" ? "allow" : route === "refuse" ? "deny" : "ask",
    rule,
    category: "write",
    risk_level: "medium",
    reasons:
      rule !== null
        ? [
            {
              source: "policy",
              code: "rule_matched",
              message: `rule \`${rule.replace(/^policy:/, "")}\` matched`,
              rule,
            },
          ]
        : [],
    verdicts: [],
    ...extra,
  };
}

/** A `Decide` routing by upstream tool name; unknown tools are accepted. Records every request. */
export function decideByTool(routes: Record<string, Route>, seen: ActionRequest[] = []): Decide {
  return (request) => {
    seen.push(request);
    const route = routes[request.tool] ?? "accept";
    return Promise.resolve(decision(route, route === "accept" ? null : `policy:${route}-${request.tool}`));
  };
}

/** A broker answering from a script; records each ask. `wait` holds the ask until the signal aborts. */
export function scriptedBroker(
  answer: (ask: ConsentAsk) => ConsentOutcome | "wait" | Promise<ConsentOutcome>,
): ConsentBroker & { asks: ConsentAsk[] } {
  const asks: ConsentAsk[] = [];
  return {
    asks,
    ask(request) {
      asks.push(request);
      const a = answer(request);
      if (a !== "wait") return Promise.resolve(a);
      return new Promise((resolve) => {
        if (request.signal.aborted) resolve({ kind: "withdrawn" });
        request.signal.addEventListener("abort", () => resolve({ kind: "withdrawn" }), { once: true });
      });
    },
  };
}

/** An audit sink that keeps events in memory. */
export function memoryAudit(): AuditSink & { events: { type: string; fields: Record<string, unknown> }[] } {
  const events: { type: string; fields: Record<string, unknown> }[] = [];
  return { events, record: (type, fields) => void events.push({ type, fields }) };
}

/** A started proxy in front of the fixture server that accepts every call (the HTTP listener tests' set-up). */
export async function startFixtureProxy(): Promise<AcpProxy> {
  const proxy = createProxy({
    upstreams: [fixture()],
    decide: decideByTool({}),
    broker: scriptedBroker(() => ({ kind: "expired" })),
  });
  await proxy.start();
  return proxy;
}

/** Starts a proxy and connects an SDK client to it in memory. */
export async function startInMemory(
  options: Partial<AcpProxyOptions> & Pick<AcpProxyOptions, "upstreams">,
): Promise<{ proxy: AcpProxy; client: Client; close: () => Promise<void> }> {
  const proxy = createProxy({
    decide: decideByTool({}),
    broker: scriptedBroker(() => ({ kind: "expired" })),
    ...options,
  });
  await proxy.start();
  const client = await connectClient(proxy);
  return {
    proxy,
    client,
    close: async () => {
      await client.close();
      await proxy.close();
    },
  };
}

/** Connects one more in-memory SDK client to a started proxy. */
export async function connectClient(proxy: AcpProxy): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await proxy.connect(serverSide);
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

/** The text of a tool result's first content item. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("\n");
}

/** One JSON-RPC message a proxy wrote to its stdio client. */
export interface RawAnswer {
  readonly id?: unknown;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string };
}

/**
 * A client on the proxy's stdio transport that writes raw lines and reads what comes back, as an agent's
 * MCP client does: every message the proxy writes goes through the real serialisation. `initialize` does
 * the handshake; `answer(id)` is the message answering `id`, if any yet; `answered(id)` waits for it (10 s).
 */
export async function rawStdioClient(proxy: AcpProxy): Promise<{
  readonly send: (message: Record<string, unknown>) => void;
  readonly initialize: () => Promise<void>;
  readonly answer: (id: unknown) => RawAnswer | undefined;
  readonly answered: (id: unknown) => Promise<RawAnswer>;
  readonly stdin: PassThrough;
  readonly end: () => void;
}> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
  await serveStdio(proxy, { stdin, stdout });
  const answer = (id: unknown): RawAnswer | undefined =>
    out
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as RawAnswer)
      .find((m) => m.id === id);
  const send = (message: Record<string, unknown>): void =>
    void stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  const answered = async (id: unknown, what = `request ${JSON.stringify(id)}`): Promise<RawAnswer> => {
    for (let i = 0; i < 1_000 && answer(id) === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    const found = answer(id);
    if (found === undefined) throw new Error(`the proxy did not answer ${what}`);
    return found;
  };
  return {
    send,
    answer,
    answered: (id) => answered(id),
    stdin,
    initialize: async () => {
      send({
        id: "init",
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-client", version: "1" } },
      });
      await answered("init", "initialize");
      send({ method: "notifications/initialized" });
    },
    end: () => void stdin.end(),
  };
}
