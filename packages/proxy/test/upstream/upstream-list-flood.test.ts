import { describe, expect, it } from "vitest";
import { connectClient, startInMemory, textOf } from "../harness.js";
import { hostile } from "./hostile-upstream.js";

// `notifications/tools/list_changed` costs the proxy a `tools/list` round trip, a pin check (pins.json read
// and written) and a notice to every client. An upstream sending thousands of them must not make the proxy
// list thousands of times at once, nor pass thousands of notices to each client.
describe("an upstream flooding notifications/tools/list_changed", () => {
  it("is listed again once at a time: two listings and two notices for 2,000 notifications", async () => {
    const env = await startInMemory({ upstreams: [hostile()], log: () => undefined });
    const other = await connectClient(env.proxy);
    let notices = 0;
    other.fallbackNotificationHandler = (n) => {
      if (n.method === "notifications/tools/list_changed") notices += 1;
      return Promise.resolve();
    };
    try {
      expect(textOf(await env.client.callTool({ name: "flood_changed", arguments: { count: 2000 } }))).toBe("flooded");
      await expect.poll(() => notices, { timeout: 10_000 }).toBeGreaterThan(0);
      // what the server counted: its first listing at start, then the listings the flood caused
      const lists = Number(textOf(await env.client.callTool({ name: "lists", arguments: {} })));
      expect(lists).toBeLessThanOrEqual(3);
      expect(notices).toBeLessThanOrEqual(2);
      expect(textOf(await env.client.callTool({ name: "echo", arguments: { text: "still" } }))).toBe("echo: still");
    } finally {
      await other.close();
      await env.close();
    }
  }, 30_000);
});
