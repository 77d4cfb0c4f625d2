import { describe, expect, it } from "vitest";
import { memoryAudit, startInMemory, textOf } from "../harness.js";
import { hostile } from "./hostile-upstream.js";

// A stdio server that closes its stdout can answer nothing more, though its process goes on running. The
// proxy must see a closed connection (the calls in flight fail, the server is reported stopped), not keep
// it "connected" with every call waiting for its timeout (here ten minutes).
describe("an upstream that closes its stdout and keeps running", () => {
  it("fails the call in flight (long before its timeout) and is reported stopped; its tools go away", async () => {
    const audit = memoryAudit();
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [hostile()],
      audit,
      log: (l) => lines.push(l),
      callTimeoutMs: 600_000,
    });
    try {
      const result = await env.client.callTool({ name: "close_stdout", arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^upstream `hostile` failed: .*connection closed/i);
      expect(env.proxy.upstreams()[0]?.status).toBe("closed");
      await expect
        .poll(() => audit.events.find((e) => e.type === "upstream_failed")?.fields)
        .toMatchObject({ server: "hostile", phase: "closed" });
      expect(lines).toContain("upstream `hostile` stopped: the server closed the connection");
      expect(textOf(await env.client.callTool({ name: "echo", arguments: {} }))).toContain("unknown tool");
    } finally {
      await env.close();
    }
  }, 30_000);
});
