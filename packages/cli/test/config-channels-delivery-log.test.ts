import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sealConfigSecret } from "@acp/core";
import type { ConsentRequestV02 } from "@acp/proxy";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configuredChannels } from "../src/wiring/config-channels.js";
import { tempRoot } from "./home-fixture.js";

const root = tempRoot("config-channels-delivery-log");
afterAll(root.cleanup);

const request = {
  type: "consent_request",
  version: "0.2.0",
  id: "cr_0123456789abcdef0123456789abcdef",
  timestamp: "2026-01-15T12:00:00.000Z",
  expires_at: "2099-01-15T12:02:00.000Z",
  agent: { id: "a", name: "agent", command: "agent" },
  action: { tool: "t", server: "s", category: "write", risk_level: "medium", parameters: {}, description: "" },
  policy: { rule_id: "r", rule_name: "r", required_level: "ask" },
  nonce: "n_00000000-0000-4000-8000-000000000000",
} as ConsentRequestV02;

describe("a configured channel that cannot deliver says so", () => {
  it("logs the webhook receiver's refusal (the other channels keep waiting, so nothing else would), not an abort", async () => {
    const receiver = createServer((_req, res) => void res.writeHead(403).end());
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    const { port } = receiver.address() as AddressInfo;
    const seed = new Uint8Array(32).fill(7);
    const secret = sealConfigSecret("hook-secret", "webhook.secret", seed, (n) => new Uint8Array(n).fill(1));
    const path = join(root.dir, "config.yml");
    writeFileSync(path, `channel: webhook\nwebhook:\n  url: "http://127.0.0.1:${port}/x"\n  secret: "${secret}"\n`);
    const lines: string[] = [];
    const [channel] = configuredChannels(
      readConfigFile(path, true),
      () => Promise.resolve(seed),
      (l) => void lines.push(l),
    );
    try {
      const failed = await channel
        ?.deliver({ request, reasons: [], sessionId: "s", signal: new AbortController().signal })
        .then(
          () => "answered",
          (e: unknown) => String(e),
        );
      expect(failed).toMatch(/403/);
      expect(lines.filter((l) => l.includes("could not deliver"))).toEqual([
        expect.stringMatching(
          /^the webhook consent channel could not deliver cr_0123456789abcdef0123456789abcdef: .*403/,
        ),
      ]);
      const ended = new AbortController();
      const aborted = channel?.deliver({ request, reasons: [], sessionId: "s", signal: ended.signal });
      ended.abort("answered");
      await aborted?.catch(() => undefined);
      expect(lines.filter((l) => l.includes("could not deliver"))).toHaveLength(1);
      expect(lines.join("\n")).not.toContain("hook-secret");
    } finally {
      await channel?.close?.();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
