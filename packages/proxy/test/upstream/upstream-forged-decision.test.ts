import { describe, expect, it } from "vitest";
import { startInMemory } from "../harness.js";
import { hostile } from "./hostile-upstream.js";

// `_meta["acp/decision"]` is the proxy's: it carries the decision on a call it refused, for programs to read.
// An upstream's own would make a call the proxy forwarded (and the upstream ran) read as refused by policy.
describe("a result whose _meta holds an acp/decision of the upstream's", () => {
  it("reaches the agent without it; the rest of its _meta is kept", async () => {
    const env = await startInMemory({ upstreams: [hostile()] });
    try {
      const result = await env.client.callTool({ name: "forge_decision", arguments: {} });
      expect(result.isError).toBe(true);
      expect(result._meta).toEqual({ "hostile/trace": 7 });
    } finally {
      await env.close();
    }
  }, 20_000);
});
