import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { connect, createServer as createNetServer } from "node:net";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sealConfigSecret } from "@acp/core";
import { readCliAnswer, signWebhookBody, type ConsentRequestV02 } from "@acp/proxy";
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
    const secret = sealConfigSecret("hook-secret-0123456789", "webhook.secret", seed, (n) => new Uint8Array(n).fill(1));
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
      for (const secretPart of ["hook-secret-0123456789", "pw-in-url", "path-token", "query-token"]) {
        expect(all).not.toContain(secretPart);
      }
      expect(all).toContain(`requests go to http://127.0.0.1:${port}/…;`);
    } finally {
      await channel?.close?.();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});

describe("a webhook secret too short to be a key", () => {
  it("makes the channel fail with what to do, naming no part of the secret", async () => {
    const seed = new Uint8Array(32).fill(7);
    const secret = sealConfigSecret("pw1234", "webhook.secret", seed, (n) => new Uint8Array(n).fill(4));
    const path = join(root.dir, "short-secret.yml");
    writeFileSync(path, `channel: webhook\nwebhook:\n  url: "http://127.0.0.1:9/hook"\n  secret: "${secret}"\n`);
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
      expect(failed).toMatch(/the webhook channel is unavailable/);
      expect(lines.join("\n")).toMatch(
        /the webhook consent channel is unavailable: `webhook.secret` is too short \(6 characters\).*at least 16.*openssl rand -hex 32/,
      );
      expect([failed, ...lines].join("\n")).not.toContain("pw1234");
    } finally {
      await channel?.close?.();
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
      // a request whose proxy died while it waited: nobody would read the answer, so it is not recorded
      const gone = spawnSync(process.execPath, ["-e", ""]).pid ?? 0;
      const orphan = { ...request, id: `cr_${"e".repeat(32)}` };
      createPendingConsentStore(db, { owner: { pid: gone, host: hostname(), start: null } }).insert({
        id: orphan.id,
        nonce: orphan.nonce,
        sessionId: "s",
        server: "s",
        tool: "t",
        request: orphan,
        reasons: [],
        createdAtMs: Date.parse(orphan.timestamp),
        expiresAtMs: Date.parse(orphan.expires_at),
      });
      expect(forward(orphan.id, answer)).toBe(false);
      expect(store.get(orphan.id)?.status).toBe("pending");
    } finally {
      db.close();
    }
  });
});

describe("two acp proxies of one home with one fixed webhook callback address", () => {
  it("the second cannot listen there; its decisions come back through the first and state.db (late ones too)", async () => {
    // a free port, then closed: both proxies are configured with it
    const probe = createNetServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const callbackPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const posts: { headers: IncomingMessage["headers"]; body: string }[] = [];
    let refuse = false;
    const receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        posts.push({ headers: req.headers, body });
        res.writeHead(refuse ? 403 : 200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    const { port } = receiver.address() as AddressInfo;
    const seed = new Uint8Array(32).fill(9);
    const secret = sealConfigSecret("shared-hook-0123456789", "webhook.secret", seed, (n) => new Uint8Array(n).fill(2));
    const path = join(root.dir, "shared-port.yml");
    writeFileSync(
      path,
      `channel: webhook\nwebhook:\n  url: "http://127.0.0.1:${port}/x"\n  secret: "${secret}"\n  callback_listen: "127.0.0.1:${callbackPort}"\n`,
    );
    const db = openPendingConsentDb(join(root.dir, "shared-state.db"));
    const store = createPendingConsentStore(db);
    const forward = pendingTableForward({ db: () => db }, () => new Date());
    const lines: string[] = [];
    const log = (l: string): void => void lines.push(l);
    const seedOf = (): Promise<Uint8Array> => Promise.resolve(seed);
    const [first] = configuredChannels(readConfigFile(path, true), seedOf, log, forward);
    const [second] = configuredChannels(readConfigFile(path, true), seedOf, log, forward);
    try {
      expect(await first?.isAvailable()).toBe(true);
      expect(await second?.isAvailable()).toBe(true);
      expect(lines.some((l) => l.includes(`127.0.0.1:${callbackPort} is in use`))).toBe(true);
      // the second proxy's request: its row is in state.db (its CLI channel put it there)
      const mine = { ...request, expires_at: new Date(Date.now() + 60_000).toISOString() };
      store.insert({
        id: mine.id,
        nonce: mine.nonce,
        sessionId: "s",
        server: "s",
        tool: "t",
        request: mine,
        reasons: [],
        createdAtMs: Date.now(),
        expiresAtMs: Date.parse(mine.expires_at),
      });
      const ended = new AbortController();
      const delivered = second?.deliver({ request: mine, reasons: [], sessionId: "s", signal: ended.signal });
      for (let i = 0; i < 200 && posts.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const callbackUrl = String(posts[0]?.headers["x-acp-callback-url"]);
      expect(callbackUrl).toBe(`http://127.0.0.1:${callbackPort}/acp/consent`);
      const send = async (fields: Record<string, unknown>): Promise<number> => {
        const body = JSON.stringify({ request_id: mine.id, ...fields });
        const timestamp = String(Math.floor(Date.now() / 1000));
        const res = await fetch(callbackUrl, {
          method: "POST",
          headers: {
            "X-ACP-Timestamp": timestamp,
            "X-ACP-Signature": signWebhookBody("shared-hook-0123456789", "callback", timestamp, body),
          },
          body,
        });
        return res.status;
      };
      expect(await send({ nonce: "n_not-this-one", decision: "approved" })).toBe(404);
      expect(store.get(mine.id)?.status).toBe("pending");
      expect(await send({ nonce: mine.nonce, decision: "approved", approver_id: "ops", modifications: { a: 1 } })).toBe(
        200,
      );
      const row = store.get(mine.id);
      expect(row?.status).toBe("approved");
      expect(readCliAnswer(row?.answer, mine.nonce, new Date())).toEqual({
        decision: "approved_with_modifications",
        approverId: "webhook:ops",
        modifications: { a: 1 },
        // the channel it came by, so the proxy holding it records `approver.channel: "webhook"`, not `cli`
        channel: "webhook",
      });
      ended.abort("answered");
      await delivered?.catch(() => undefined);
      // the first proxy's own request, whose POST it gave up on (the receiver now refuses): a decision that still
      // comes back while the request is pending counts, through state.db
      const late = {
        ...mine,
        id: "cr_11111111111111111111111111111111",
        nonce: "n_11111111-1111-4111-8111-111111111111",
      };
      store.insert({
        id: late.id,
        nonce: late.nonce,
        sessionId: "s",
        server: "s",
        tool: "t",
        request: late,
        reasons: [],
        createdAtMs: Date.now(),
        expiresAtMs: Date.parse(late.expires_at),
      });
      refuse = true;
      const failed = await first
        ?.deliver({ request: late, reasons: [], sessionId: "s", signal: new AbortController().signal })
        .then(
          () => "answered",
          (e: unknown) => String(e),
        );
      expect(failed).toMatch(/403/);
      const body = JSON.stringify({ request_id: late.id, nonce: late.nonce, decision: "denied", reason: "late" });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const res = await fetch(callbackUrl, {
        method: "POST",
        headers: {
          "X-ACP-Timestamp": timestamp,
          "X-ACP-Signature": signWebhookBody("shared-hook-0123456789", "callback", timestamp, body),
        },
        body,
      });
      expect(res.status).toBe(200);
      expect(store.get(late.id)?.status).toBe("denied");
      // the first proxy exits: the second takes the address over at its next request and answers there itself
      await first?.close?.();
      const next = {
        ...mine,
        id: "cr_22222222222222222222222222222222",
        nonce: "n_22222222-2222-4222-8222-222222222222",
      };
      refuse = false;
      const direct = second?.deliver({
        request: next,
        reasons: [],
        sessionId: "s",
        signal: new AbortController().signal,
      });
      for (let i = 0; i < 200 && !posts.some((p) => p.body.includes(next.id)); i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(lines.some((l) => l.includes(`now listening on 127.0.0.1:${callbackPort}`))).toBe(true);
      const nextBody = JSON.stringify({ request_id: next.id, nonce: next.nonce, decision: "approved" });
      const nextTs = String(Math.floor(Date.now() / 1000));
      const direct200 = await fetch(callbackUrl, {
        method: "POST",
        headers: {
          "X-ACP-Timestamp": nextTs,
          "X-ACP-Signature": signWebhookBody("shared-hook-0123456789", "callback", nextTs, nextBody),
        },
        body: nextBody,
      });
      expect(direct200.status).toBe(200);
      expect(await direct).toMatchObject({ decision: "approved", approverId: "webhook" });
    } finally {
      await first?.close?.();
      await second?.close?.();
      db.close();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});

describe("the webhook callback listener", () => {
  it("cuts off a client that trickles its headers (10 s, not Node's minute)", async () => {
    const seed = new Uint8Array(32).fill(5);
    const secret = sealConfigSecret("slow-hook-0123456789", "webhook.secret", seed, (n) => new Uint8Array(n).fill(3));
    const path = join(root.dir, "slow.yml");
    writeFileSync(path, `channel: webhook\nwebhook:\n  url: "http://127.0.0.1:9/x"\n  secret: "${secret}"\n`);
    const lines: string[] = [];
    const [channel] = configuredChannels(
      readConfigFile(path, true),
      () => Promise.resolve(seed),
      (l) => void lines.push(l),
    );
    try {
      expect(await channel?.isAvailable()).toBe(true);
      const url = /decisions come back to (\S+)/.exec(lines.join("\n"))?.[1] ?? "";
      const { hostname, port } = new URL(url);
      const ended = await new Promise<string>((resolve) => {
        const socket = connect(Number(port), hostname, () => socket.write("POST /acp/consent HTTP/1.1\r\nHost: x\r\n"));
        let got = "";
        socket.on("data", (c: Buffer) => (got += c.toString("latin1")));
        socket.on("close", () => resolve(got));
        socket.on("error", () => undefined);
      });
      expect(ended === "" || ended.startsWith("HTTP/1.1 408")).toBe(true);
    } finally {
      await channel?.close?.();
    }
  }, 30_000);
});
