import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ActionRequest } from "@acp/core";
import { PendingObservations, type CallObserver, type Decide } from "../src/index.js";
import {
  connectClient,
  decideByTool,
  decision,
  fixture,
  memoryAudit,
  scriptedBroker,
  startInMemory,
  textOf,
} from "./harness.js";

describe("observations after the reply", () => {
  it("queued work runs later, in order, and at once when the session is settled", async () => {
    const ran: string[] = [];
    const errors: unknown[] = [];
    const queue = new PendingObservations((err) => errors.push(err));
    queue.add("s1", () => ran.push("a"));
    queue.add("s2", () => ran.push("x"));
    queue.add("s1", () => {
      throw new Error("broken observer");
    });
    queue.add("s1", () => ran.push("b"));
    expect(ran).toEqual([]);
    expect(queue.pending("s1")).toBe(3);
    queue.settle("s1");
    // the failing one is reported, the one after it still ran; the other session is untouched
    expect(ran).toEqual(["a", "b"]);
    expect(errors).toHaveLength(1);
    expect(queue.pending("s2")).toBe(1);
    await vi.waitFor(() => expect(queue.pending("s2")).toBe(0));
    expect(ran).toEqual(["a", "b", "x"]);
  });
});

describe("the session runtime sees every result before a later call of the session is judged", () => {
  // what the observer has been told, per session, and what each decision saw when it was made
  const results = new Map<string, string[]>();
  const atDecision: { session: string; text: unknown; observed: readonly string[] }[] = [];
  const observer: CallObserver = {
    executed: () => undefined,
    result: (sessionId, _server, _tool, text) => {
      const list = results.get(sessionId) ?? [];
      list.push(text);
      results.set(sessionId, list);
    },
  };
  const decide: Decide = (request: ActionRequest, context) => {
    const session = context?.sessionId ?? "";
    atDecision.push({ session, text: request.arguments["text"], observed: [...(results.get(session) ?? [])] });
    return Promise.resolve(decision("accept"));
  };
  let env: Awaited<ReturnType<typeof startInMemory>>;
  beforeAll(async () => {
    env = await startInMemory({ upstreams: [fixture()], decide, observer, audit: memoryAudit() });
  });
  afterAll(async () => env.close());

  it("back-to-back calls: the decision of call n has seen the results of calls 1..n-1", async () => {
    const other = await connectClient(env.proxy);
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) {
      const text = `call-${i}`;
      // another session's calls in between must not count for this one
      const [mine] = await Promise.all([
        env.client.callTool({ name: "echo", arguments: { text } }),
        other.callTool({ name: "echo", arguments: { text: `other-${i}` } }),
      ]);
      expect(textOf(mine)).toBe(`fixture echo: ${text}`);
      sent.push(`fixture echo: ${text}`);
    }
    await other.close();
    const sessionOf = atDecision.find((d) => d.text === "call-0")?.session ?? "";
    const mine = atDecision.filter((d) => d.session === sessionOf);
    expect(mine).toHaveLength(20);
    mine.forEach((d, n) => {
      // every earlier result of this session, in order, and nothing of the other session
      expect(d.observed.map((t) => t.trim())).toEqual(sent.slice(0, n));
    });
  });

  it("a result is recorded even when no later call comes", async () => {
    const client = await connectClient(env.proxy);
    await client.callTool({ name: "echo", arguments: { text: "last-one" } });
    await vi.waitFor(() =>
      expect([...results.values()].flat().map((t) => t.trim())).toContain("fixture echo: last-one"),
    );
    await client.close();
  });

  it("a session that closes has its queued results recorded before the runtime hears it closed", async () => {
    const closedWith: string[][] = [];
    const env2 = await startInMemory({
      upstreams: [fixture()],
      decide,
      observer: {
        ...observer,
        closed: (id) => closedWith.push([...(results.get(id) ?? [])].map((t) => t.trim())),
      },
    });
    await env2.client.callTool({ name: "echo", arguments: { text: "before-close" } });
    await env2.close();
    expect(closedWith).toEqual([["fixture echo: before-close"]]);
  });
});

describe("the fast path (accepted tools/call relayed beside the SDK client)", () => {
  const audit = memoryAudit();
  let env: Awaited<ReturnType<typeof startInMemory>>;
  beforeAll(async () => {
    env = await startInMemory({ upstreams: [fixture()], audit, callTimeoutMs: 30_000 });
  });
  afterAll(async () => env.close());

  it("a cancelled call is cancelled upstream under the relay's id, nothing is answered, the session goes on", async () => {
    const relay = env.proxy.pool.get("fixture")?.relay;
    const session = [...env.proxy.sessions.values()][0];
    expect(relay).toBeDefined();
    const controller = new AbortController();
    const pending = env.client.callTool({ name: "hang", arguments: {} }, undefined, { signal: controller.signal });
    await vi.waitFor(() => expect(relay?.inFlight).toBe(1));
    expect(session?.fast.size).toBe(1);
    controller.abort("the agent changed its mind");
    await expect(pending).rejects.toThrow();
    await vi.waitFor(() => expect(relay?.inFlight).toBe(0));
    await vi.waitFor(() => expect(session?.fast.size).toBe(0));
    const completed = audit.events.filter((e) => e.type === "tool_call_completed" && e.fields["tool"] === "hang");
    expect(completed.length).toBeGreaterThan(0);
    expect(completed.every((e) => e.fields["is_error"] === true)).toBe(true);
    const result = await env.client.callTool({ name: "echo", arguments: { text: "still here" } });
    expect(textOf(result)).toBe("fixture echo: still here");
  });

  it("calls with the same JSON-RPC ids from two sessions each get their own reply", async () => {
    const a = await connectClient(env.proxy);
    const b = await connectClient(env.proxy);
    // both clients number their requests from the same start: the upstream sees distinct relay ids
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).callTool({ name: "echo", arguments: { text: `${i % 2 === 0 ? "a" : "b"}-${i}` } }),
      ),
    );
    replies.forEach((r, i) => expect(textOf(r)).toBe(`fixture echo: ${i % 2 === 0 ? "a" : "b"}-${i}`));
    await a.close();
    await b.close();
  });

  it("a malformed call is answered beside the SDK server: -32602 in a line (proxy-server/invalid-requests.test.ts)", async () => {
    const result = env.client.request(
      { method: "tools/call", params: { name: 42 as unknown as string } },
      (await import("@modelcontextprotocol/sdk/types.js")).CallToolResultSchema,
    );
    await expect(result).rejects.toMatchObject({
      code: -32602,
      message: "MCP error -32602: tools/call: `name` must be a string (got a number)",
    });
  });
});

describe("what the session runtime is told ran", () => {
  it("the request as decided (annotations and agent included), with the arguments that were forwarded", async () => {
    const decided: ActionRequest[] = [];
    const executed: ActionRequest[] = [];
    const observer: CallObserver = {
      executed: (_id, request) => void executed.push(request),
      result: () => undefined,
    };
    // `transfer` is annotated destructive and asked; the person approves it with a smaller amount
    const broker = scriptedBroker(() => ({
      kind: "approved",
      arguments: { amount: 5 },
      consentResponse: {},
      scope: "once",
    }));
    const env = await startInMemory({
      upstreams: [fixture()],
      decide: decideByTool({ transfer: "ask" }, decided),
      broker,
      observer,
      audit: memoryAudit(),
    });
    try {
      await env.client.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 500 } }))).toBe("transferred 5");
      await vi.waitFor(() => expect(executed).toHaveLength(2));
    } finally {
      await env.close();
    }
    // an accepted call: the very request the decision judged (the runtime reuses its judgment)
    expect(executed[0]).toBe(decided[0]);
    expect(executed[0]).toMatchObject({ server: "fixture", tool: "echo", agent: "test-agent" });
    // an approved, modified call: as decided (its annotations decide its category), with what was forwarded
    expect(executed[1]).toStrictEqual({ ...decided[1], arguments: { amount: 5 } });
    expect(executed[1]?.annotations).toStrictEqual({ destructiveHint: true });
  });
});
