import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryPinStore, createProxy, type AcpProxyOptions, type UpstreamSpec } from "../src/index.js";
import { connectClient, decideByTool, fixture, scriptedBroker, textOf } from "./harness.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acp-start-wait-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The slow-start fixture: starts once `release` exists (never, without it); writes its pid to `pidFile`. */
function slow(name: string, pidFile: string, release?: string): UpstreamSpec {
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args: [fileURLToPath(new URL("./fixtures/slow-start-server.mjs", import.meta.url))],
    env: { PID_FILE: pidFile, ...(release !== undefined ? { START_RELEASE: release } : {}) },
  };
}

/** A proxy that accepts every call. */
function proxyOf(
  options: Partial<AcpProxyOptions> & Pick<AcpProxyOptions, "upstreams">,
): ReturnType<typeof createProxy> {
  return createProxy({ decide: decideByTool({}), broker: scriptedBroker(() => ({ kind: "expired" })), ...options });
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("an upstream slow or hanging at its start does not hold back the others", () => {
  it("serves the upstreams that are up once the wait is over; a hanging one is still starting, and stopped at close", async () => {
    const lines: string[] = [];
    const pidFile = join(dir, "hung.pid");
    const proxy = proxyOf({
      upstreams: [slow("hung", pidFile), fixture()],
      startWaitMs: 200,
      log: (l) => lines.push(l),
    });
    // without the bound, start would wait for the hung server's start timeout (60 s), past this test's own
    await proxy.start();
    expect(proxy.upstreams().map((u) => [u.spec.name, u.status])).toEqual([
      ["hung", "connecting"],
      ["fixture", "connected"],
    ]);
    expect(lines).toContain(
      "upstream `hung`: still starting; serving the others meanwhile (its tools are announced with tools/list_changed once it is up)",
    );
    const client = await connectClient(proxy);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("echo");
    expect(names).not.toContain("late_echo");
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "now" } }))).toBe("fixture echo: now");
    await expect.poll(() => existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(running(pid)).toBe(true);
    await client.close();
    await proxy.close();
    // the server still starting is stopped with the proxy, not left behind
    await expect.poll(() => running(pid), { timeout: 10_000 }).toBe(false);
    expect(proxy.upstreams()[0]?.status).toBe("closed");
  });

  it("an upstream up after the proxy began serving is announced with tools/list_changed, pinned, and callable", async () => {
    const lines: string[] = [];
    const release = join(dir, "release");
    const pinStore = createMemoryPinStore();
    const proxy = proxyOf({
      upstreams: [slow("late", join(dir, "late.pid"), release), fixture()],
      startWaitMs: 50,
      pinStore,
      log: (l) => lines.push(l),
    });
    await proxy.start();
    try {
      expect(proxy.upstreams()[0]?.status).toBe("connecting");
      const client = await connectClient(proxy);
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("late_echo");
      writeFileSync(release, "");
      await expect.poll(() => changed, { timeout: 20_000 }).toBeGreaterThan(0);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["echo", "late_echo"]));
      expect(lines).toContain("upstream `late`: connected (1 tools), after the others");
      // its tools are pinned as any upstream's at start
      await expect.poll(async () => [...(await pinStore.load("late")).keys()]).toEqual(["late_echo"]);
      expect(textOf(await client.callTool({ name: "late_echo", arguments: { text: "hi" } }))).toBe("late: hi");
      await client.close();
    } finally {
      await proxy.close();
    }
  });

  it("with no upstream up when the wait is over, start waits on for the first one", async () => {
    const release = join(dir, "release");
    const pidFile = join(dir, "only.pid");
    const proxy = proxyOf({ upstreams: [slow("only", pidFile, release)], startWaitMs: 1 });
    let started = false;
    const starting = proxy.start().then(() => (started = true));
    try {
      await expect.poll(() => existsSync(pidFile), { timeout: 20_000 }).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // the wait (1 ms) is long over, yet start has not returned: there is nothing to serve yet
      expect(started).toBe(false);
      writeFileSync(release, "");
      await starting;
      expect(proxy.upstreams()[0]?.status).toBe("connected");
      expect(proxy.upstreams()[0]?.tools.map((t) => t.name)).toEqual(["late_echo"]);
    } finally {
      await starting.catch(() => undefined);
      await proxy.close();
    }
  });
});
