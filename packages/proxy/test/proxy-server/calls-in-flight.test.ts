/**
 * `proxy.max_calls_in_flight`: a session has at most that many `tools/call`s being decided or forwarded at
 * once; one more is answered at once with a tool error, never forwarded, and audited as a refusal. Calls are
 * held at a real upstream (a stdio server that answers once a file exists), so they stay in flight as long as
 * the test needs: nothing depends on timing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { parseProxyConfig } from "../../src/config/proxy-config.js";
import { connectClient, memoryAudit, startInMemory, textOf } from "../harness.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function heldUpstream(release: string) {
  return {
    name: "held",
    transport: "stdio" as const,
    command: process.execPath,
    args: [fileURLToPath(new URL("../fixtures/held-server.mjs", import.meta.url))],
    env: { HELD_RELEASE: release },
  };
}

describe("calls in flight per session", () => {
  it("with a cap of 3, 5 calls at once: 2 refused at once (audited, not forwarded), 3 complete; another session still calls", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-in-flight-"));
    dirs.push(dir);
    const release = join(dir, "release");
    const audit = memoryAudit();
    const { proxy, client, close } = await startInMemory({
      upstreams: [heldUpstream(release)],
      maxCallsInFlight: 3,
      audit,
    });
    try {
      const calls = [0, 1, 2, 3, 4].map((n) => client.callTool({ name: "held", arguments: { n } }));
      const settled = calls.map((call, n) => call.then((result) => ({ n, result })));
      // the refusals come back while the other three are still held at the upstream
      const refused: { n: number; result: Awaited<(typeof calls)[number]> }[] = [];
      for (let i = 0; i < 2; i++) {
        const first = await Promise.race(settled.filter((_, n) => !refused.some((r) => r.n === n)));
        refused.push(first);
      }
      for (const { result } of refused) {
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/^too many calls in flight in this session \(3\): /);
      }
      // another session is not affected: its call goes through while the first one's are held
      const other = await connectClient(proxy);
      const echoed = await other.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(echoed.isError).not.toBe(true);
      expect(textOf(echoed)).toBe("echo: hi");
      writeFileSync(release, "");
      const all = await Promise.all(settled);
      const done = all.filter(({ n }) => !refused.some((r) => r.n === n));
      expect(done.map(({ result }) => textOf(result)).sort()).toEqual(done.map(({ n }) => `released ${n}`).sort());
      expect(done).toHaveLength(3);
      // once they ended, the session may call again
      const again = await client.callTool({ name: "held", arguments: { n: 9 } });
      expect(textOf(again)).toBe("released 9");
      await other.close();
      const refusals = audit.events.filter(
        (e) =>
          e.type === "policy_evaluated" &&
          e.fields["decision"] === "refuse" &&
          JSON.stringify(e.fields["reasons"]).includes("too_many_calls_in_flight"),
      );
      expect(refusals).toHaveLength(2);
      const refusedIds = new Set(refusals.map((e) => e.fields["call_id"]));
      const forwarded = audit.events.filter((e) => e.type === "tool_call_forwarded");
      expect(forwarded).toHaveLength(5); // three held, the other session's echo, the one after
      expect(forwarded.some((e) => refusedIds.has(e.fields["call_id"]))).toBe(false);
      const intercepted = audit.events.filter(
        (e) => e.type === "tool_call_intercepted" && refusedIds.has(e.fields["call_id"]),
      );
      expect(intercepted).toHaveLength(2);
    } finally {
      writeFileSync(release, "");
      await close();
    }
  }, 60_000);
});

describe("proxy.max_calls_in_flight", () => {
  it("takes a whole number from 1, and leaves the default when absent", () => {
    const set = parseProxyConfig({ max_calls_in_flight: 8 });
    expect(set.ok && set.value.maxCallsInFlight).toBe(8);
    const none = parseProxyConfig({});
    expect(none.ok && none.value.maxCallsInFlight).toBeUndefined();
  });

  it("refuses anything else, at its path", () => {
    for (const value of [0, -1, 1.5, "64", 100_001, null, true]) {
      const r = parseProxyConfig({ max_calls_in_flight: value });
      expect(r.ok ? [] : r.issues).toEqual([
        {
          code: "proxy_config_invalid",
          path: ["proxy", "max_calls_in_flight"],
          message: "`proxy.max_calls_in_flight` must be a whole number from 1 to 100,000",
        },
      ]);
    }
  });
});
