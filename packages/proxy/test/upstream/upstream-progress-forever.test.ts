import { describe, expect, it } from "vitest";
import { memoryAudit, startInMemory, textOf } from "../harness.js";
import { hostile } from "./hostile-upstream.js";

// Progress restarts a call's timeout, so clients that reset theirs on progress do not give up on a long tool.
// An upstream that sends progress for ever must still be cut off: at `callMaxMs` in all, however much
// progress came, the call ends in a tool error and is cancelled upstream (it used to wait for ever).
describe("an upstream that sends progress and never answers", () => {
  it("is cut off at the total bound, with a tool error that says so", async () => {
    const audit = memoryAudit();
    const env = await startInMemory({ upstreams: [hostile()], audit, callTimeoutMs: 300, callMaxMs: 1_500 });
    try {
      let ticks = 0;
      const result = await env.client.callTool({ name: "progress_forever", arguments: { every: 50 } }, undefined, {
        onprogress: () => {
          ticks += 1;
        },
        resetTimeoutOnProgress: true,
        timeout: 60_000,
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        "upstream `hostile` did not answer in time: MCP error -32001: Request took longer than its 1.5 s in all",
      );
      // the progress came through (it is what kept the call past its 300 ms timeout)
      expect(ticks).toBeGreaterThan(0);
      expect(audit.events.find((e) => e.type === "tool_call_completed")?.fields).toMatchObject({ is_error: true });
    } finally {
      await env.close();
    }
  }, 30_000);

  it("still lets a call that is silent for its timeout end at the timeout, not the total bound", async () => {
    const env = await startInMemory({ upstreams: [hostile()], callTimeoutMs: 300, callMaxMs: 600_000 });
    try {
      // no progress token: nothing restarts the 300 ms timeout
      const result = await env.client.callTool({ name: "progress_forever", arguments: { every: 50 } });
      expect(textOf(result)).toBe("upstream `hostile` did not answer in time: MCP error -32001: Request timed out");
    } finally {
      await env.close();
    }
  }, 30_000);
});
