import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createPipeline, createSession, sessionSource, type Session } from "@acp/core";
import { createProxy, type CallObserver, type ConsentAsk, type UpstreamSpec } from "../src/index.js";
import { connectClient, scriptedBroker } from "./harness.js";

// A prompt, a resource, a completion's values or an upstream's error from which the proxy took hidden text
// (tag characters, bidi controls) was an injection attempt, as a tool result with them is (a2d7dbac): the
// session runtime is told so (`hiddenTextRemoved`), and a later consequential call asks (`instructions_seen`).
// Before, only tool results told it: the cleaned prompt read as plain text, and the send went through.

const SMUGGLER: UpstreamSpec = {
  name: "smuggler",
  transport: "stdio",
  command: process.execPath,
  args: [fileURLToPath(new URL("./fixtures/smuggling-server.mjs", import.meta.url))],
};

/** One core session per downstream session, told as `acp proxy`'s wiring tells it (every option passed on). */
function runtime(): { observer: CallObserver; sessionFor: (id: string) => Session } {
  const sessions = new Map<string, Session>();
  const sessionFor = (id: string): Session => {
    let session = sessions.get(id);
    if (session === undefined) {
      session = createSession({
        now: () => new Date(),
        random: (n) => randomBytes(n),
        authorityKey: randomBytes(32),
        settings: { require_plan: false, escalate_after_instructions: true },
      });
      session.setIntent({ goal: "read and send mail", allowed_actions: ["*", "**"] });
      session.start();
      sessions.set(id, session);
    }
    return session;
  };
  return {
    sessionFor,
    observer: {
      executed: (id, request) => void sessionFor(id).recordExecution(request),
      result: (id, server, tool, text, options) => void sessionFor(id).recordToolResult(server, tool, text, options),
      unreadable: (id, server, tool, why) => sessionFor(id).recordUnreadableResult(server, tool, why),
    },
  };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function start(): Promise<{ client: Client; other: Client; asks: ConsentAsk[] }> {
  const { observer, sessionFor } = runtime();
  const asks: ConsentAsk[] = [];
  const proxy = createProxy({
    upstreams: [SMUGGLER],
    decide: (request, context) =>
      createPipeline(context === undefined ? [] : [sessionSource(sessionFor(context.sessionId))]).decide(
        request,
        new Date(),
      ),
    observer,
    broker: scriptedBroker((ask) => {
      asks.push(ask);
      return { kind: "denied", reason: "test" };
    }),
  });
  await proxy.start();
  const client = await connectClient(proxy);
  const other = await connectClient(proxy);
  close = async () => {
    await other.close();
    await client.close();
    await proxy.close();
  };
  return { client, other, asks };
}

/** Asserts the client's send asks for instructions seen in `source`, and the other session's does not ask. */
async function expectAsked(started: { client: Client; other: Client; asks: ConsentAsk[] }, source: string) {
  const send = { name: "send_email", arguments: { to: "team@example.com", body: "the minutes" } };
  expect((await started.client.callTool(send)).isError).toBe(true);
  expect(started.asks.map((a) => a.tool)).toStrictEqual(["send_email"]);
  const reasons = started.asks[0]?.decision.reasons ?? [];
  expect(reasons.map((r) => r.code)).toContain("instructions_seen");
  expect(JSON.stringify(reasons)).toContain(source);
  // a session that never read it sends unasked
  expect((await started.other.callTool(send)).isError).not.toBe(true);
  expect(started.asks).toHaveLength(1);
}

describe("a read with hidden text taken out marks the session as having seen instructions", () => {
  it("prompts/get: a later send asks, naming smuggler.prompts/get", async () => {
    const started = await start();
    const prompt = await started.client.getPrompt({ name: "brief" });
    expect(prompt._meta?.["acp/hidden_text_removed"]).toBe(24);
    await expectAsked(started, "smuggler.prompts/get");
  }, 30_000);

  it("resources/read: a later send asks, naming smuggler.resources/read", async () => {
    const started = await start();
    const read = await started.client.readResource({ uri: "notes://note" });
    expect(read.contents[0]).toMatchObject({ text: "meeting at noon" });
    await expectAsked(started, "smuggler.resources/read");
  }, 30_000);

  it("completion/complete: a later send asks, naming smuggler.completion/complete", async () => {
    const started = await start();
    const offered = await started.client.complete({
      ref: { type: "ref/prompt", name: "brief" },
      argument: { name: "topic", value: "w" },
    });
    expect(offered.completion.values).toStrictEqual(["weekly", "monthly"]);
    await expectAsked(started, "smuggler.completion/complete");
  }, 30_000);

  it("an upstream's error to prompts/get: a later send asks, naming smuggler.prompts/get", async () => {
    const started = await start();
    await expect(started.client.getPrompt({ name: "broken" })).rejects.toThrow(/^MCP error -32602: no such brief$/);
    await expectAsked(started, "smuggler.prompts/get");
  }, 30_000);
});
