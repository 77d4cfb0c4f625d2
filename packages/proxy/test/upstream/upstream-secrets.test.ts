import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { createProxy, type CredentialHook } from "../../src/index.js";
import { decideByTool, scriptedBroker, textOf } from "../harness.js";
import { hostile } from "./hostile-upstream.js";

const SECRET = "canary-5ec12e7-value-0099";

/** Injects the vault value into every call's `secret` argument, as a `credentials:` argument rule does. */
const credentials: CredentialHook = {
  inject: (_server, _tool, args) => Promise.resolve({ arguments: { ...args, secret: SECRET }, injected: ["TOKEN"] }),
  secretValues: () => [SECRET],
};

// The proxy puts a vault value into a call; the upstream (compromised, or echoing what it was given) says it
// back on every channel it has besides the result: a JSON-RPC error, a log line, a progress message, a
// request to the agent's client. The agent must never read it (docs/guides/proxy.md, "Credentials").
describe("a secret the proxy injected never reaches the agent, whatever the upstream sends it back in", () => {
  it("is scrubbed from a JSON-RPC error (message and data), a log line, a progress message and an elicitation", async () => {
    const lines: string[] = [];
    const proxy = createProxy({
      upstreams: [hostile()],
      decide: decideByTool({}),
      broker: scriptedBroker(() => ({ kind: "expired" })),
      credentials,
      log: (l) => lines.push(l),
    });
    await proxy.start();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverSide);
    const client = new Client({ name: "agent", version: "1" }, { capabilities: { elicitation: {} } });
    const seen: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(JSON.stringify(n)));
    client.setRequestHandler(ElicitRequestSchema, (r) => {
      seen.push(JSON.stringify(r));
      return { action: "decline" };
    });
    await client.connect(clientSide);
    try {
      const error = await client.callTool({ name: "leak_error", arguments: {} }).then(
        () => "no error",
        (err: unknown) => JSON.stringify({ message: (err as Error).message, data: (err as { data?: unknown }).data }),
      );
      expect(error).toBe(
        JSON.stringify({ message: "MCP error -32602: bad key [REDACTED]", data: { secret: "[REDACTED]" } }),
      );
      const logged = await client.callTool({ name: "leak_log", arguments: {} }, undefined, {
        onprogress: (p) => void seen.push(JSON.stringify(p)),
      });
      expect(textOf(logged)).toBe("logged");
      await expect.poll(() => seen.length).toBe(3);
      expect(seen.join("\n")).not.toContain(SECRET);
      expect(seen.join("\n")).toContain("log [REDACTED]");
      expect(seen.join("\n")).toContain("progress [REDACTED]");
      expect(seen.join("\n")).toContain("elicit [REDACTED]");
      expect(lines.join("\n")).not.toContain(SECRET);
    } finally {
      await client.close();
      await proxy.close();
    }
  }, 20_000);
});
