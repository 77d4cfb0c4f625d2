import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createProxy } from "../../src/index.js";
import { decideByTool, scriptedBroker, textOf } from "../harness.js";
import { hostile } from "./hostile-upstream.js";

// The proxy declares sampling and elicitation to upstreams, not roots: the agent's directories are not a
// server's to read (docs/guides/proxy.md). An upstream that asks the agent's client for them anyway, or for
// any method the proxy did not declare, is answered "method not found" by the proxy; the client never hears.
describe("a request an upstream sends the agent's client", () => {
  it("reaches it for elicitation; roots/list and undeclared methods are refused by the proxy", async () => {
    const proxy = createProxy({
      upstreams: [hostile()],
      decide: decideByTool({}),
      broker: scriptedBroker(() => ({ kind: "expired" })),
    });
    await proxy.start();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverSide);
    const client = new Client(
      { name: "agent", version: "1" },
      { capabilities: { roots: { listChanged: true }, elicitation: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler(ListRootsRequestSchema, () => {
      asked.push("roots/list");
      return { roots: [{ uri: "file:///home/me/private-project", name: "private" }] };
    });
    client.setRequestHandler(ElicitRequestSchema, () => {
      asked.push("elicitation/create");
      return { action: "decline" };
    });
    await client.connect(clientSide);
    const ask = async (method: string, params: object = {}): Promise<string> =>
      textOf(await client.callTool({ name: "ask_client", arguments: { method, params } }));
    try {
      expect(await ask("roots/list")).toBe("refused: Method not found: roots/list");
      expect(await ask("tools/list")).toBe("refused: Method not found: tools/list");
      const form = { message: "your name?", requestedSchema: { type: "object", properties: {} } };
      expect(await ask("elicitation/create", form)).toMatch(/^answered: .*decline/);
      expect(asked).toEqual(["elicitation/create"]);
    } finally {
      await client.close();
      await proxy.close();
    }
  }, 20_000);
});
