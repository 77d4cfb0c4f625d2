/**
 * Why the webhook callback listener may serve plain HTTP beyond loopback (docs/guides/consent-channels.md): a
 * callback seen on the wire decides nothing a second time, at the proxy that took it or at another proxy of the home.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sealConfigSecret } from "@acp/core";
import { signWebhookBody, type ConsentRequestV02 } from "@acp/proxy";
import { createPendingConsentStore, openPendingConsentDb } from "@acp/store";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configuredChannels, pendingTableForward } from "../src/wiring/config-channels.js";
import { tempRoot } from "./home-fixture.js";

const root = tempRoot("webhook-callback-replay");
afterAll(root.cleanup);

const SECRET = "replay-hook-0123456789";

function requestFor(id: string, nonce: string): ConsentRequestV02 {
  return {
    type: "consent_request",
    version: "0.2.0",
    id,
    timestamp: new Date().toISOString(),
    expires_at: new Date(Date.now() + 60_000).toISOString(),
    agent: { id: "a", name: "agent", command: "agent" },
    action: { tool: "t", server: "s", category: "write", risk_level: "medium", parameters: {}, description: "" },
    policy: { rule_id: "r", rule_name: "r", required_level: "ask" },
    nonce,
  };
}

async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe("a webhook callback captured on the wire", () => {
  it("is refused when sent again: 409 at the proxy that took it, 404 at another proxy of the home", async () => {
    const callbackPort = await freePort();
    const delivered: string[] = [];
    const receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        delivered.push(body);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    const { port } = receiver.address() as AddressInfo;
    const seed = new Uint8Array(32).fill(5);
    const sealed = sealConfigSecret(SECRET, "webhook.secret", seed, (n) => new Uint8Array(n).fill(3));
    const path = join(root.dir, "config.yml");
    const listen = `127.0.0.1:${callbackPort}`;
    const yaml = `channel: webhook\nwebhook:\n  url: "http://127.0.0.1:${port}/x"\n  secret: "${sealed}"\n  callback_listen: "${listen}"\n`;
    writeFileSync(path, yaml);
    const db = openPendingConsentDb(join(root.dir, "state.db"));
    const store = createPendingConsentStore(db);
    const forward = pendingTableForward({ db: () => db }, () => new Date());
    const seedOf = (): Promise<Uint8Array> => Promise.resolve(seed);
    const lines: string[] = [];
    const log = (l: string): void => void lines.push(l);
    // the first proxy listens on the fixed address; the second's decisions come back through it and state.db
    const [first] = configuredChannels(readConfigFile(path, true), seedOf, log, forward);
    const [second] = configuredChannels(readConfigFile(path, true), seedOf, log, forward);
    const url = `http://${listen}/acp/consent`;
    try {
      expect(await first?.isAvailable()).toBe(true);
      expect(await second?.isAvailable()).toBe(true);
      const held = requestFor("cr_33333333333333333333333333333333", "n_33333333-3333-4333-8333-333333333333");
      store.insert({
        id: held.id,
        nonce: held.nonce,
        sessionId: "s",
        server: "s",
        tool: "t",
        request: held,
        reasons: [],
        createdAtMs: Date.now(),
        expiresAtMs: Date.parse(held.expires_at),
      });
      const ended = new AbortController();
      const waiting = second?.deliver({ request: held, reasons: [], sessionId: "s", signal: ended.signal });
      // the callback as it crosses the network: its exact bytes and headers
      const body = JSON.stringify({ request_id: held.id, nonce: held.nonce, decision: "denied", reason: "no" });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const headers = {
        "X-ACP-Timestamp": timestamp,
        "X-ACP-Signature": signWebhookBody(SECRET, "callback", timestamp, body),
      };
      const post = async (): Promise<number> => (await fetch(url, { method: "POST", headers, body })).status;
      expect(await post()).toBe(200);
      expect(store.get(held.id)?.status).toBe("denied");
      // sent again to the proxy that took it: a signature already accepted
      expect(await post()).toBe(409);
      // the request ends (the second proxy read the answer); the first proxy exits, the second takes the address
      ended.abort("answered");
      await waiting?.catch(() => undefined);
      await first?.close?.();
      const next = requestFor("cr_44444444444444444444444444444444", "n_44444444-4444-4444-8444-444444444444");
      const nextEnded = new AbortController();
      const nextWaiting = second?.deliver({ request: next, reasons: [], sessionId: "s", signal: nextEnded.signal });
      for (let i = 0; i < 200 && !delivered.some((b) => b.includes(next.id)); i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(lines.some((l) => l.includes(`now listening on ${listen}`))).toBe(true);
      // the same bytes at the proxy that now listens, which never saw them: the request takes one answer only
      expect(await post()).toBe(404);
      const row = store.get(held.id);
      expect(row?.status).toBe("denied");
      nextEnded.abort("withdrawn");
      await nextWaiting?.catch(() => undefined);
    } finally {
      await first?.close?.();
      await second?.close?.();
      db.close();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
