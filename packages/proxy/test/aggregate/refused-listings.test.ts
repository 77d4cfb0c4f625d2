import { describe, expect, it } from "vitest";
import type { UpstreamSpec } from "../../src/index.js";
import { startInMemory } from "../harness.js";
import { hostile } from "../upstream/hostile-upstream.js";

/** The hostile fixture upstream with these prompts and resources listed. */
function listing(name: string, prompts: unknown[], resources: unknown[]): UpstreamSpec {
  return hostile(name, undefined, {
    HOSTILE_PROMPTS: JSON.stringify(prompts),
    HOSTILE_RESOURCES: JSON.stringify(resources),
  });
}

// As with tools: the agent's client checks a prompts/list or resources/list answer whole, so one prompt or
// resource the MCP schema refuses, from any upstream, would cost the agent every server's prompts or
// resources. Such an item is left out of the union and said once.
describe("prompts and resources an upstream lists wrong", () => {
  it("cost that server only those items; the agent lists every other server's", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [
        listing(
          "a",
          [{ name: "p", arguments: "x" }, { name: "fine_a" }],
          [{ uri: "file:///x" }, { uri: "file:///y", name: "y" }],
        ),
        listing("b", [{ name: "q" }], [{ uri: "file:///z", name: "z" }]),
      ],
      log: (l) => lines.push(l),
    });
    try {
      const { prompts } = await env.client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(["fine_a", "q"]);
      const { resources } = await env.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["file:///y", "file:///z"]);
      await env.client.listResources();
      expect(lines.filter((l) => l.includes("not served: "))).toEqual([
        'upstream `a`: 1 prompt is not served: "p" (arguments: Invalid input: expected array, received string)',
        'upstream `a`: 1 resource is not served: "file:///x" (name: Invalid input: expected string, received undefined)',
      ]);
    } finally {
      await env.close();
    }
  }, 20_000);
});
