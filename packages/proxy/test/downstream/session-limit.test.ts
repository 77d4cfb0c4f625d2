import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { listenHttp, type AcpProxy, type HttpListener } from "../../src/index.js";
import { textOf, startFixtureProxy } from "../harness.js";

const SHARED = "shared-token-0123456789abcdef";
const CI_BOT = "ci-bot-token-0123456789abcdef";
const NIGHTLY = "nightly-token-0123456789abcdef";
/** A quarter of it (2) is what one named agent may hold. */
const MAX = 8;

type Opened = { client: Client; transport: StreamableHTTPClientTransport };

async function connect(url: string, token: string): Promise<Opened> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "agent", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** A raw `initialize`: the status and body the listener answers a new session with. */
async function initialize(url: string, token: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
    }),
  });
  return { status: response.status, text: await response.text() };
}

/** Ends a session as a client that is done does (DELETE), then closes the client. */
async function end({ client, transport }: Opened): Promise<void> {
  await transport.terminateSession();
  await client.close();
}

describe("acp proxy --http: a bounded number of sessions (proxy.max_sessions)", () => {
  let proxy: AcpProxy;
  let listener: HttpListener;
  let url: string;
  let open: Opened[] = [];
  beforeAll(async () => {
    proxy = await startFixtureProxy();
    listener = await listenHttp(proxy, {
      port: 0,
      bearerToken: SHARED,
      agentTokens: new Map([
        ["ci_bot", CI_BOT],
        ["nightly", NIGHTLY],
      ]),
      maxSessions: MAX,
    });
    url = listener.url;
  });
  afterEach(async () => {
    await Promise.all(open.map(end));
    open = [];
  });
  afterAll(async () => {
    await listener.close();
    await proxy.close();
  });

  it("refuses a session beyond the limit with 429, on /mcp and /sse, and takes one again once a session ends", async () => {
    for (let i = 0; i < MAX; i++) open.push(await connect(url, SHARED));
    const refused = await initialize(url, SHARED);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain(`too many sessions: ${MAX} are open (proxy.max_sessions)`);
    const sse = await fetch(`${url}/sse`, { headers: { authorization: `Bearer ${SHARED}` } });
    expect(sse.status).toBe(429);
    await sse.body?.cancel();
    // the sessions already open keep working
    const result = await open[0]!.client.callTool({ name: "echo", arguments: { text: "still here" } });
    expect(textOf(result)).toContain("still here");
    await end(open.pop()!);
    open.push(await connect(url, SHARED));
    expect((await initialize(url, SHARED)).status).toBe(429);
  });

  it("one named agent may hold a quarter of the sessions; the other agents and the shared token still get theirs", async () => {
    open.push(await connect(url, CI_BOT), await connect(url, CI_BOT));
    const refused = await initialize(url, CI_BOT);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain("too many sessions for agent `ci_bot`: it holds 2");
    open.push(await connect(url, NIGHTLY), await connect(url, SHARED));
    await end(open.shift()!);
    open.push(await connect(url, CI_BOT));
  });

  it("counts sessions still being opened: a burst of initializes never opens more than the limit", async () => {
    const answers = await Promise.all(Array.from({ length: 3 * MAX }, () => initialize(url, SHARED)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(MAX);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * MAX);
    // (these raw sessions stay open until the listener closes after this last test)
  });
});
