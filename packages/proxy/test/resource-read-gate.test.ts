import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { classifyAction, type ActionRequest } from "@acp/core";
import { EVERYTHING, decision, scriptedBroker, startInMemory } from "./harness.js";

// `resources/read` is decided as tool `resources/read`: a read by what the method is, waiting for a person
// like a tool call does (progress while it waits), and reading what the person approved.
describe("resources/read through the gate", () => {
  const seen: ActionRequest[] = [];
  let approvedUri = "";
  const broker = scriptedBroker(async (ask) => {
    // long enough for the heartbeat to tick at least once
    await new Promise((resolve) => setTimeout(resolve, 120));
    return {
      kind: "approved",
      arguments: approvedUri === "" ? ask.arguments : { uri: approvedUri },
      consentResponse: {},
      scope: "once",
    };
  });
  let started: Awaited<ReturnType<typeof startInMemory>>;
  beforeAll(async () => {
    started = await startInMemory({
      upstreams: [EVERYTHING],
      decide: (request) => {
        seen.push(request);
        return Promise.resolve(decision("ask", "policy:ask-resources"));
      },
      broker,
      progressIntervalMs: 20,
    });
  });
  afterAll(async () => {
    await started.close();
  });

  it("is classified as a read (the method only reads), so `category: read` rules apply to it", async () => {
    approvedUri = "";
    const uri = "demo://resource/dynamic/text/1";
    await started.client.readResource({ uri });
    const request = seen.at(-1);
    expect(request).toMatchObject({ tool: "resources/read", arguments: { uri }, annotations: { readOnlyHint: true } });
    expect(classifyAction(request as ActionRequest, []).category).toBe("read");
    // a policy's own classify: entry still wins over it
    expect(
      classifyAction(request as ActionRequest, [{ tool: "resources/read", category: "system", risk_level: "high" }])
        .category,
    ).toBe("system");
  });

  it("sends progress while a person decides, so the client's request timeout is reset", async () => {
    approvedUri = "";
    const ticks: Progress[] = [];
    const read = await started.client.readResource(
      { uri: "demo://resource/dynamic/text/3" },
      { onprogress: (p) => ticks.push(p), resetTimeoutOnProgress: true },
    );
    expect(read.contents[0]?.uri).toBe("demo://resource/dynamic/text/3");
    expect(ticks.length).toBeGreaterThan(0);
    expect(ticks[0]?.message).toContain("resources/read");
  });

  it("reads the URI the person approved when they edited it", async () => {
    approvedUri = "demo://resource/dynamic/text/5";
    const read = await started.client.readResource({ uri: "demo://resource/dynamic/text/4" });
    expect(read.contents[0]?.uri).toBe("demo://resource/dynamic/text/5");
  });

  it("tells the session runtime what the resource said, as it does a tool result", async () => {
    const results: { server: string; tool: string; text: string }[] = [];
    const executed: ActionRequest[] = [];
    const observed = await startInMemory({
      upstreams: [EVERYTHING],
      decide: () => Promise.resolve(decision("accept")),
      observer: {
        executed: (_session, request) => void executed.push(request),
        result: (_session, server, tool, text) => void results.push({ server, tool, text }),
      },
    });
    try {
      const read = await observed.client.readResource({ uri: "demo://resource/dynamic/text/7" });
      const text = (read.contents[0] as { text?: string }).text ?? "";
      expect(text).not.toBe("");
      await new Promise((resolve) => setImmediate(resolve));
      expect(results).toEqual([{ server: "everything", tool: "resources/read", text }]);
      expect(executed[0]).toMatchObject({
        tool: "resources/read",
        arguments: { uri: "demo://resource/dynamic/text/7" },
      });
    } finally {
      await observed.close();
    }
  });
});
