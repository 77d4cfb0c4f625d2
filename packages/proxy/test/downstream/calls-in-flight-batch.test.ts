/**
 * `proxy.max_calls_in_flight` over `acp proxy --http`: one raw JSON-RPC batch of N+k `tools/call`s to a tool
 * held at a real upstream (answers once a file exists, so nothing depends on timing). Exactly k are refused
 * with `too_many_calls_in_flight` while the N are held; the N are answered once released.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createProxy, listenHttp } from "../../src/index.js";
import { decideByTool, scriptedBroker } from "../harness.js";

const TOKEN = "batch-token-0123456789abcdef";
const N = 3;
const K = 4;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Answer = { id: number; result?: { isError?: boolean; content?: { text?: string }[] } };

function headers(session?: string): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${TOKEN}`,
    ...(session === undefined ? {} : { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }),
  };
}

/** Reads JSON-RPC answers from a POST's answer (SSE or JSON) until `count` have come, returns them. */
async function readAnswers(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  state: { buffer: string },
  count: number,
): Promise<Answer[]> {
  const decoder = new TextDecoder();
  const answers: Answer[] = [];
  for (;;) {
    let cut: number;
    while ((cut = state.buffer.indexOf("\n\n")) >= 0) {
      const event = state.buffer.slice(0, cut);
      state.buffer = state.buffer.slice(cut + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const data = JSON.parse(line.slice(5)) as Answer | Answer[];
        answers.push(...(Array.isArray(data) ? data : [data]));
      }
      if (answers.length >= count) return answers;
    }
    const { value, done } = await reader.read();
    if (done) {
      const rest = state.buffer.trim();
      if (rest.startsWith("[") || rest.startsWith("{")) {
        const data = JSON.parse(rest) as Answer | Answer[];
        answers.push(...(Array.isArray(data) ? data : [data]));
      }
      return answers;
    }
    state.buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
  }
}

const textOf = (a: Answer): string => a.result?.content?.[0]?.text ?? "";

describe("acp proxy --http: a batch of calls beyond proxy.max_calls_in_flight", () => {
  it(`a batch of ${N}+${K} held calls with a cap of ${N}: exactly ${K} refused at once, the ${N} answered after release`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-batch-in-flight-"));
    dirs.push(dir);
    const release = join(dir, "release");
    const proxy = createProxy({
      upstreams: [
        {
          name: "held",
          transport: "stdio",
          command: process.execPath,
          args: [fileURLToPath(new URL("../fixtures/held-server.mjs", import.meta.url))],
          env: { HELD_RELEASE: release },
        },
      ],
      decide: decideByTool({}),
      broker: scriptedBroker(() => ({ kind: "expired" })),
      maxCallsInFlight: N,
    });
    await proxy.start();
    const listener = await listenHttp(proxy, { port: 0, bearerToken: TOKEN });
    try {
      const init = await fetch(`${listener.url}/mcp`, {
        method: "POST",
        headers: headers(),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
        }),
      });
      expect(init.status).toBe(200);
      const session = init.headers.get("mcp-session-id") ?? "";
      expect(session).not.toBe("");
      await init.text();
      const initialized = await fetch(`${listener.url}/mcp`, {
        method: "POST",
        headers: headers(session),
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      });
      expect(initialized.status).toBe(202);
      await initialized.text();

      const batch = Array.from({ length: N + K }, (_, i) => ({
        jsonrpc: "2.0",
        id: i + 1,
        method: "tools/call",
        params: { name: "held", arguments: { n: i + 1 } },
      }));
      const response = await fetch(`${listener.url}/mcp`, {
        method: "POST",
        headers: headers(session),
        body: JSON.stringify(batch),
      });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const state = { buffer: "" };
      // the refusals come back while the N are still held at the upstream (not yet released)
      const first = await readAnswers(reader, state, K);
      expect(first).toHaveLength(K);
      for (const answer of first) {
        expect(answer.result?.isError).toBe(true);
        expect(textOf(answer)).toMatch(new RegExp(`^too many calls in flight in this session \\(${N}\\): `));
      }
      writeFileSync(release, "");
      const rest = await readAnswers(reader, state, N);
      expect(rest).toHaveLength(N);
      const refusedIds = new Set(first.map((a) => a.id));
      for (const answer of rest) {
        expect(answer.result?.isError).not.toBe(true);
        expect(textOf(answer)).toBe(`released ${answer.id}`);
        expect(refusedIds.has(answer.id)).toBe(false);
      }
      expect(new Set([...first, ...rest].map((a) => a.id)).size).toBe(N + K);
      await reader.cancel();
    } finally {
      await listener.close();
      await proxy.close();
    }
  });
});
