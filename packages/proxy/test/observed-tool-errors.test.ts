import { afterEach, describe, expect, it } from "vitest";
import type { CallObserver } from "../src/index.js";
import { startInMemory } from "./harness.js";
import { hostile } from "./upstream/hostile-upstream.js";

// A trusted server's errors were told to the session runtime as its answers are, so they vouched for the
// values they held: but an error speaks of the call (`file /x/<the attacker's IBAN> not found`). The proxy
// now tells the runtime which results are the call's error (MCP's `isError`, a JSON-RPC error relayed), and
// the runtime records them as untrusted text whatever the server's configured trust.

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe("the proxy tells the session runtime which results are the call's error", () => {
  it("marks a tool error and a relayed JSON-RPC error, not an answer", async () => {
    const told: { tool: string; text: string; error: boolean | undefined }[] = [];
    const observer: CallObserver = {
      executed: () => undefined,
      result: (_id, _server, tool, text, options) => void told.push({ tool, text, error: options?.error }),
    };
    const started = await startInMemory({ upstreams: [hostile()], observer });
    close = started.close;
    const { client } = started;
    const answer = await client.callTool({ name: "echo", arguments: { text: "DE89 3704 0044 0532 0130 00" } });
    expect(answer.isError).not.toBe(true);
    const forged = await client.callTool({ name: "forge_decision", arguments: {} });
    expect(forged.isError).toBe(true);
    await expect(
      client.callTool({ name: "leak_error", arguments: { secret: "DE89 3704 0044 0532 0130 00" } }),
    ).rejects.toThrow();
    await expect.poll(() => told.length).toBe(3);
    expect(told.map((t) => [t.tool, t.error])).toStrictEqual([
      ["echo", undefined],
      ["forge_decision", true],
      ["leak_error", true],
    ]);
    expect(told[2]?.text).toContain("DE89 3704 0044 0532 0130 00");
  }, 30_000);
});
