import { describe, expect, it } from "vitest";
import { startInMemory } from "../harness.js";
import { hostile } from "./hostile-upstream.js";

const OBJECT = { type: "object" } as const;
const CLEAR_SCREEN = "\u001b[2J";
// eslint-disable-next-line no-control-regex -- a raw control character in a log line is what this test looks for
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

// The proxy's log lines quote what upstreams send: tool names, methods, error messages. On a terminal
// (acp proxy --http with the terminal consent channel, whose prompt is on the same stderr) a raw escape
// sequence could erase or redraw what a person is asked to approve. Every line is escaped, as the
// upstream's own stderr lines were.
describe("what an upstream names reaches the proxy's log escaped", () => {
  it("a tool name holding an escape sequence is logged as \\u001b, not as the character", async () => {
    const lines: string[] = [];
    const tools = [{ name: `x${CLEAR_SCREEN}y`, inputSchema: OBJECT }];
    const env = await startInMemory({
      upstreams: [hostile("a", tools), hostile("b", tools)],
      prefixTools: "never",
      log: (l) => lines.push(l),
    });
    try {
      // a name holding a control character is not of the MCP name format: neither server's tool is served
      for (const server of ["a", "b"]) {
        expect(lines).toContainEqual(
          expect.stringContaining(
            `upstream \`${server}\`: 1 tool is not served: "x\\u001b[2Jy" (its name holds U+001B`,
          ),
        );
      }
      expect(lines.filter((l) => CONTROL.test(l))).toEqual([]);
    } finally {
      await env.close();
    }
  }, 20_000);
});
