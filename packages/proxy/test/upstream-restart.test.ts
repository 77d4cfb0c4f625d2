import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createProxy, type AcpProxyOptions } from "../src/index.js";
import { connectClient, decideByTool, fixture, memoryAudit, scriptedBroker, textOf } from "./harness.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acp-restart-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function proxyOf(
  options: Partial<AcpProxyOptions> & Pick<AcpProxyOptions, "upstreams">,
): ReturnType<typeof createProxy> {
  return createProxy({ decide: decideByTool({}), broker: scriptedBroker(() => ({ kind: "expired" })), ...options });
}

describe("an upstream that stops after it was up is started again", () => {
  it("a crashed server comes back: its tools are announced again and answer", async () => {
    const lines: string[] = [];
    const audit = memoryAudit();
    const proxy = proxyOf({
      upstreams: [fixture()],
      restartUpstreams: { firstDelayMs: 100, maxDelayMs: 400 },
      audit,
      log: (l) => lines.push(l),
    });
    await proxy.start();
    const client = await connectClient(proxy);
    try {
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "before" } }))).toBe(
        "fixture echo: before",
      );
      const crashed = await client.callTool({ name: "crash", arguments: {} });
      expect(crashed.isError).toBe(true);
      expect(textOf(crashed)).toMatch(/connection closed/i);
      await expect
        .poll(() => lines.includes("upstream `fixture`: started again (6 tools)"), { timeout: 20_000 })
        .toBe(true);
      expect(lines).toContain("upstream `fixture`: starting it again in 0.1 s");
      // told when it stopped and again when it came back
      await expect.poll(() => changed).toBeGreaterThanOrEqual(2);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("echo");
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "back" } }))).toBe("fixture echo: back");
      expect(audit.events.filter((e) => e.type === "upstream_failed").map((e) => e.fields["phase"])).toEqual([
        "closed",
      ]);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("a server that cannot come back is tried again with a doubling delay, up to the most, until it does", async () => {
    const lines: string[] = [];
    const failIf = join(dir, "fail");
    const spec = fixture();
    if (spec.transport !== "stdio") throw new Error("the fixture is a command");
    const proxy = proxyOf({
      upstreams: [{ ...spec, env: { FIXTURE_FAIL_IF: failIf } }],
      restartUpstreams: { firstDelayMs: 100, maxDelayMs: 400 },
      log: (l) => lines.push(l),
    });
    await proxy.start();
    const client = await connectClient(proxy);
    try {
      writeFileSync(failIf, "");
      await client.callTool({ name: "crash", arguments: {} });
      const delays = (): string[] =>
        lines.filter((l) => l.startsWith("upstream `fixture`: starting it again in ")).map((l) => l.slice(41));
      await expect.poll(() => delays().length, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
      expect(delays().slice(0, 4)).toEqual(["0.1 s", "0.2 s", "0.4 s", "0.4 s"]);
      expect(proxy.upstreams()[0]?.status).not.toBe("connected");
      expect(lines.some((l) => l.startsWith("upstream `fixture` failed: "))).toBe(true);
      unlinkSync(failIf);
      // connected comes before its tools are listed and announced: the line says when they are
      await expect
        .poll(() => lines.includes("upstream `fixture`: started again (6 tools)"), { timeout: 20_000 })
        .toBe(true);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "up" } }))).toBe("fixture echo: up");
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("without restartUpstreams a stopped server stays stopped; one that never came up is not retried", async () => {
    const lines: string[] = [];
    const proxy = proxyOf({
      upstreams: [fixture(), { name: "broken", transport: "stdio", command: "/nonexistent/mcp-server", args: [] }],
      log: (l) => lines.push(l),
    });
    await proxy.start();
    const client = await connectClient(proxy);
    try {
      await client.callTool({ name: "crash", arguments: {} });
      await expect.poll(() => proxy.upstreams()[0]?.status).toBe("closed");
      expect(lines.filter((l) => l.includes("starting it again"))).toEqual([]);
    } finally {
      await client.close();
      await proxy.close();
    }
    const restarting = proxyOf({
      upstreams: [{ name: "broken", transport: "stdio", command: "/nonexistent/mcp-server", args: [] }, fixture()],
      restartUpstreams: { firstDelayMs: 100, maxDelayMs: 400 },
      log: (l) => lines.push(l),
    });
    await restarting.start();
    try {
      expect(restarting.upstreams()[0]?.status).toBe("failed");
      expect(lines.filter((l) => l.includes("starting it again"))).toEqual([]);
    } finally {
      await restarting.close();
    }
  });
});
