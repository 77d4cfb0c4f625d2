import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sealConfigSecret } from "@acp/core";
import { readCliAnswer, type ConsentRequestV02 } from "@acp/proxy";
import { createPendingConsentStore, openPendingConsentDb } from "@acp/store";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configuredChannels, pendingTableForward } from "../src/wiring/config-channels.js";
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
  it("logs the webhook receiver's refusal (the other channels keep waiting, so nothing else would), not an abort, and no part of the URL that may be secret", async () => {
    const receiver = createServer((_req, res) => void res.writeHead(403).end());
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    const { port } = receiver.address() as AddressInfo;
    const seed = new Uint8Array(32).fill(7);
    const secret = sealConfigSecret("hook-secret", "webhook.secret", seed, (n) => new Uint8Array(n).fill(1));
    const path = join(root.dir, "config.yml");
    const url = `http://hook:pw-in-url@127.0.0.1:${port}/hooks/T0/path-token?token=query-token`;
    writeFileSync(path, `channel: webhook\nwebhook:\n  url: "${url}"\n  secret: "${secret}"\n`);
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
      const all = lines.join("\n");
      for (const secretPart of ["hook-secret", "pw-in-url", "path-token", "query-token"]) {
        expect(all).not.toContain(secretPart);
      }
      expect(all).toContain(`requests go to http://127.0.0.1:${port}/…;`);
    } finally {
      await channel?.close?.();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});

describe("a Telegram press on another proxy's request", () => {
  it("is recorded in the home's pending table, as acp approve would, where the proxy holding it reads it", () => {
    const db = openPendingConsentDb(join(root.dir, "state.db"));
    try {
      const store = createPendingConsentStore(db);
      const now = new Date("2026-01-15T12:00:30.000Z");
      store.insert({
        id: request.id,
        nonce: request.nonce,
        sessionId: "s",
        server: "s",
        tool: "t",
        request,
        reasons: [],
        createdAtMs: Date.parse(request.timestamp),
        expiresAtMs: Date.parse(request.expires_at),
      });
      const forward = pendingTableForward({ db: () => db }, () => now);
      const answer = { decision: "approved", scope: "session", approverId: "telegram:1" } as const;
      expect(forward(`cr_${"f".repeat(32)}`, answer)).toBe(false);
      expect(forward(request.id, answer)).toBe(true);
      const row = store.get(request.id);
      expect(row?.status).toBe("approved");
      expect(readCliAnswer(row?.answer, request.nonce, now)).toEqual(answer);
      // answered once: a second press is not recorded
      expect(forward(request.id, { decision: "denied", approverId: "telegram:1" })).toBe(false);
      expect(pendingTableForward({ db: () => null }, () => now)(request.id, answer)).toBe(false);
    } finally {
      db.close();
    }
  });
});
