import { describe, expect, it } from "vitest";
import { decideByTool, EVERYTHING, fixture, memoryAudit, startInMemory, textOf } from "./harness.js";

describe("upstream failures never hang a call and never take the others down", () => {
  it("an upstream crashing mid-call gives a tool error; the other upstream keeps working", async () => {
    const audit = memoryAudit();
    const env = await startInMemory({ upstreams: [fixture(), EVERYTHING], audit, log: () => undefined });
    try {
      const result = await env.client.callTool({ name: "crash", arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^upstream `fixture` failed: .*connection closed/i);
      // one completion event for the one call, carrying the error (it was written twice before)
      const completed = audit.events.filter((e) => e.type === "tool_call_completed" && e.fields["tool"] === "crash");
      expect(completed).toHaveLength(1);
      expect(completed[0]?.fields["is_error"]).toBe(true);
      expect(String(completed[0]?.fields["error"])).toMatch(/connection closed/i);
      await expect
        .poll(() => audit.events.some((e) => e.type === "upstream_failed" && e.fields["phase"] === "closed"))
        .toBe(true);
      const echo = await env.client.callTool({ name: "everything__echo", arguments: { message: "still here" } });
      expect(textOf(echo)).toContain("still here");
      const later = await env.client.callTool({ name: "fixture__echo", arguments: { text: "x" } });
      expect(later.isError).toBe(true);
      expect(textOf(later)).toContain("unknown tool");
    } finally {
      await env.close();
    }
  });

  it("an upstream that hangs is bounded by the call timeout", async () => {
    const env = await startInMemory({ upstreams: [fixture()], callTimeoutMs: 400 });
    try {
      const result = await env.client.callTool({ name: "hang", arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^upstream `fixture` did not answer in time/);
    } finally {
      await env.close();
    }
  });

  it("an upstream that fails to start is reported (stderr and audit) while the others serve", async () => {
    const audit = memoryAudit();
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [{ name: "broken", transport: "stdio", command: "/nonexistent/mcp-server", args: [] }, fixture()],
      audit,
      log: (l) => lines.push(l),
      decide: decideByTool({}),
    });
    try {
      expect(env.proxy.upstreams().map((u) => [u.spec.name, u.status])).toEqual([
        ["broken", "failed"],
        ["fixture", "connected"],
      ]);
      expect(lines.some((l) => l.startsWith("upstream `broken` failed:"))).toBe(true);
      expect(audit.events.find((e) => e.type === "upstream_failed")?.fields["server"]).toBe("broken");
      const result = await env.client.callTool({ name: "echo", arguments: { text: "ok" } });
      expect(textOf(result)).toBe("fixture echo: ok");
    } finally {
      await env.close();
    }
  });

  it("an upstream URL with nothing listening is reported, not fatal", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [{ name: "gone", transport: "streamable-http", url: "http://127.0.0.1:9/mcp" }, fixture()],
      log: (l) => lines.push(l),
    });
    try {
      expect(env.proxy.upstreams()[0]?.status).toBe("failed");
      expect((await env.client.listTools()).tools.map((t) => t.name)).toContain("echo");
    } finally {
      await env.close();
    }
  });

  it("an upstream's stderr is relayed with its control characters escaped: it cannot rewrite the proxy's own lines", async () => {
    const lines: string[] = [];
    const script =
      "process.stderr.write('ok\\u001b[2K\\racp proxy: upstream `bank`: connected\\n'); setTimeout(() => {}, 300)";
    const env = await startInMemory({
      upstreams: [{ name: "noisy", transport: "stdio", command: process.execPath, args: ["-e", script] }, fixture()],
      log: (l) => lines.push(l),
    });
    try {
      await expect.poll(() => lines.find((l) => l.startsWith("[noisy] "))).toBeDefined();
      const relayed = lines.find((l) => l.startsWith("[noisy] ")) ?? "";
      expect(relayed).toBe("[noisy] ok\\u001b[2K\\u000dacp proxy: upstream `bank`: connected");
    } finally {
      await env.close();
    }
  });
});
