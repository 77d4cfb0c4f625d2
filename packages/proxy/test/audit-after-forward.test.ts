import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditSink } from "../src/index.js";
import { decideByTool, fixture, startInMemory, textOf } from "./harness.js";
import { hostile } from "./upstream/hostile-upstream.js";

/**
 * A call that reached the upstream has taken effect. When its `tool_call_completed` event cannot be written,
 * the agent must learn that it ran (and must not run it again), not that it "could not be completed": an
 * agent told the latter retries, and a payment or a send happens twice.
 */
describe("an audit write that fails after the call was forwarded", () => {
  const written: string[] = [];
  let failCompleted = true;
  const audit: AuditSink = {
    record: (type) => {
      if (type === "tool_call_completed" && failCompleted) throw new Error("disk full");
      written.push(type);
    },
  };
  const logged: string[] = [];
  let env: Awaited<ReturnType<typeof startInMemory>>;
  beforeAll(async () => {
    env = await startInMemory({
      upstreams: [fixture()],
      decide: decideByTool({ echo: "accept" }),
      audit,
      log: (line: string) => logged.push(line),
    });
  });
  afterAll(async () => env.close());

  it("tells the agent the call ran and withholds its result, and logs why", async () => {
    const result = await env.client.callTool({ name: "echo", arguments: { text: "pay 100" } });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toContain("the call ran on `fixture`");
    expect(text).toContain("could not be recorded in the audit log (disk full)");
    expect(text).toContain("do not run it again");
    expect(text).not.toContain("could not be completed");
    // the upstream's answer is not handed over unrecorded
    expect(text).not.toContain("pay 100");
    expect(written).toContain("tool_call_forwarded");
    expect(logged.some((l) => l.includes("ran, but it could not be recorded in the audit log: disk full"))).toBe(true);
  });

  it("returns the upstream's answer once the event is written again", async () => {
    failCompleted = false;
    const result = await env.client.callTool({ name: "echo", arguments: { text: "hello" } });
    expect(result.isError).not.toBe(true);
    expect(textOf(result)).toContain("hello");
  });
});

describe("an upstream's JSON-RPC error whose tool_call_completed cannot be written", () => {
  let completedTried = 0;
  const audit: AuditSink = {
    record: (type) => {
      if (type !== "tool_call_completed") return;
      completedTried += 1;
      throw new Error("disk full");
    },
  };
  let env: Awaited<ReturnType<typeof startInMemory>>;
  beforeAll(async () => {
    env = await startInMemory({ upstreams: [hostile()], decide: decideByTool({ leak_error: "accept" }), audit });
  });
  afterAll(async () => env.close());

  it("is told the call ran, and the event is tried once, not twice", async () => {
    const result = await env.client.callTool({ name: "leak_error", arguments: { secret: "x" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("the call ran on `hostile`");
    expect(completedTried).toBe(1);
  });
});
