import { describe, expect, it } from "vitest";
import { fixture, startInMemory, textOf } from "../harness.js";
import { hostile } from "./hostile-upstream.js";

const OBJECT = { type: "object" } as const;
const TOOLS = [
  { name: "garbage_stdout", inputSchema: OBJECT },
  { name: "flood_stderr", inputSchema: OBJECT },
  { name: "garbage_flood", inputSchema: OBJECT },
];
const FLOOD = 20_000;
// eslint-disable-next-line no-control-regex -- a raw control character in a log line is what this test looks for
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

// A stdio upstream is a program of someone else's: what it writes to stdout that is not JSON-RPC, and
// however much it writes to stderr, is reported on the proxy's log, bounded, and costs no one else a call.
describe("a stdio upstream writing what is not JSON-RPC, or flooding its stderr", () => {
  it("lines on stdout that are not messages are reported, escaped; the call is answered", async () => {
    const lines: string[] = [];
    const env = await startInMemory({ upstreams: [hostile("noisy", TOOLS), fixture()], log: (l) => lines.push(l) });
    try {
      const result = await env.client.callTool({ name: "garbage_stdout", arguments: {} });
      expect(textOf(result)).toBe("after garbage");
      const said = lines.filter((l) => l.startsWith("upstream `noisy` sent something that is not a JSON-RPC message"));
      expect(said).toHaveLength(4);
      expect(said.filter((l) => CONTROL.test(l))).toEqual([]);
      expect(textOf(await env.client.callTool({ name: "echo", arguments: { text: "alive" } }))).toContain("alive");
    } finally {
      await env.close();
    }
  }, 30_000);

  it("a stderr flood reaches the log as a burst, then a count of the lines not shown; the others go on", async () => {
    const lines: string[] = [];
    const env = await startInMemory({ upstreams: [hostile("noisy", TOOLS), fixture()], log: (l) => lines.push(l) });
    try {
      const result = await env.client.callTool({ name: "flood_stderr", arguments: { count: FLOOD } });
      expect(textOf(result)).toBe("after the flood");
      expect(textOf(await env.client.callTool({ name: "echo", arguments: { text: "alive" } }))).toContain("alive");
      const shown = (): number => lines.filter((l) => l.startsWith("[noisy] noise line ")).length;
      const held = (): number =>
        lines
          .map((l) =>
            /^\[noisy\] \((\d+) more line\(s\) of its stderr not shown: over 200 at once or 100 a second\)$/.exec(l),
          )
          .reduce((sum, m) => sum + (m === null ? 0 : Number(m[1])), 0);
      // every line is either shown or counted, and most of a flood is counted
      await expect.poll(() => shown() + held(), { timeout: 10_000 }).toBe(FLOOD);
      expect(shown()).toBeLessThan(FLOOD / 2);
      expect(lines).toContain("[noisy] noise line 0");
    } finally {
      await env.close();
    }
  }, 30_000);

  it("a flood of lines on stdout that are not messages is reported as a burst, then a count", async () => {
    const lines: string[] = [];
    const env = await startInMemory({ upstreams: [hostile("noisy", TOOLS), fixture()], log: (l) => lines.push(l) });
    try {
      const result = await env.client.callTool({ name: "garbage_flood", arguments: { count: FLOOD } });
      expect(textOf(result)).toBe("after the garbage");
      expect(textOf(await env.client.callTool({ name: "echo", arguments: { text: "alive" } }))).toContain("alive");
      const prefix = "upstream `noisy` sent something that is not a JSON-RPC message: ";
      const shown = (): number => lines.filter((l) => l.startsWith(`${prefix}Unexpected token`)).length;
      const held = (): number =>
        lines
          .map((l) =>
            l.startsWith(prefix)
              ? /^\((\d+) more like this not shown: over 200 at once or 100 a second\)$/.exec(l.slice(prefix.length))
              : null,
          )
          .reduce((sum, m) => sum + (m === null ? 0 : Number(m[1])), 0);
      await expect.poll(() => shown() + held(), { timeout: 10_000 }).toBe(FLOOD);
      expect(shown()).toBeLessThan(FLOOD / 2);
    } finally {
      await env.close();
    }
  }, 30_000);
});
