/**
 * `acp serve` puts consent requests on the channel config.yml names (`channel: telegram`, as acp proxy
 * does): a press from the configured chat answers the waiting `/v1/decide?wait=true` call, signed and
 * audited with channel telegram; an answer from elsewhere edits the message; a press on a request this
 * node does not hold is recorded in the pending table for the node that waits (recordForwardedAnswer).
 * Telegram is a local stand-in Bot API.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openPendingConsent, recordForwardedAnswer } from "@acp/server";
import { registerServe, type ServeReady } from "../src/commands/serve.js";
import type { CliContext } from "../src/context.js";
import { configureTelegram, envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { startTelegramStandIn, type TelegramStandIn } from "../../proxy/test/consent/telegram-stand-in.js";

const TOKEN = "123456:TEST-token-for-the-serve-stand-in";
const CHAT = 4242;
const AGENT = "serve-channels-agent-token-0123";
const APPROVER = "serve-channels-approver-token-0123";

const root = tempRoot("serve-channels");
let bot: TelegramStandIn;
let home = "";
let stop!: () => void;
let done: Promise<unknown>;
let ready: ServeReady;
let stderr = "";

beforeAll(async () => {
  bot = await startTelegramStandIn(TOKEN);
  ({ home } = fixtureHome(root.dir));
  const env = envFor(home);
  await configureTelegram(home, { token: TOKEN, chatId: CHAT, apiRoot: bot.apiRoot });
  const ctx: CliContext = {
    io: {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      env: { ...env, ACP_BRIDGE_TOKEN: AGENT, ACP_APPROVER_TOKEN: APPROVER },
      cwd: home,
      now: () => new Date(),
    },
    exitCode: 0,
  };
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let onReady!: (r: ServeReady) => void;
  const started = new Promise<ServeReady>((resolve) => (onReady = resolve));
  const program = new Command("acp").exitOverride();
  registerServe(program, ctx, { onReady, stopped: () => stopped });
  done = program.parseAsync(["node", "acp", "serve", "--port", "0"]);
  ready = await Promise.race([
    started,
    done.then(() => {
      throw new Error(`acp serve stopped: ${stderr}`);
    }),
  ]);
}, 60_000);

afterAll(async () => {
  stop();
  await done;
  await bot.close();
  root.cleanup();
});

/** A `write_file` call waiting for a person (the starter policy asks). */
function waitingWrite(path: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${ready.url}/v1/decide?wait=true`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json" },
    body: JSON.stringify({ tool: "write_file", arguments: { path, ...extra } }),
  });
}

/** The stand-in's message for the request whose text names `path`, with its buttons. */
async function messageFor(path: string): Promise<{ id: number; approve: string; deny: string }> {
  return vi.waitFor(
    () => {
      const message = bot.messages.find((m) => m.text.includes(path));
      const buttons = message?.reply_markup?.inline_keyboard.flat() ?? [];
      const approve = buttons.find((b) => b.text.includes("Approve"))?.callback_data;
      const deny = buttons.find((b) => b.text.includes("Deny"))?.callback_data;
      if (message === undefined || approve === undefined || deny === undefined) throw new Error("no message yet");
      return { id: message.message_id, approve, deny };
    },
    { timeout: 20_000, interval: 50 },
  );
}

function auditLines(): { event_type: string; metadata?: Record<string, unknown> }[] {
  return readFileSync(join(home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { event_type: string; metadata?: Record<string, unknown> });
}

describe("acp serve with `channel: telegram`", () => {
  it("says at start where requests go, and a press from the configured chat answers the waiting call", async () => {
    expect(stderr).toContain("consent requests also go to telegram (config.yml channel:)");
    const call = waitingWrite("/tmp/serve-telegram", { api_token: "tg-s3cret-0123456789" });
    const message = await messageFor("/tmp/serve-telegram");
    const text = bot.messages.find((m) => m.message_id === message.id)?.text ?? "";
    expect(text).toContain("write_file");
    // the person on Telegram sees the arguments redacted, as everywhere else
    expect(text).not.toContain("tg-s3cret-0123456789");
    expect(text).toContain(`\n\u200e• \u2066api_token\u2069: \u2066"[redacted]"\u2069\n`);
    // someone in another chat cannot decide
    bot.pressButton({ chatId: 999, messageId: message.id, data: message.approve });
    bot.pressButton({ chatId: CHAT, messageId: message.id, data: message.approve });
    const answer = (await (await call).json()) as { route: string; consent?: { outcome: string } };
    expect(answer).toMatchObject({ route: "accept", consent: { outcome: "approved" } });
    const approved = auditLines().filter((e) => e.event_type === "consent_approved");
    expect(JSON.stringify(approved.at(-1))).toContain(`"approver":{"channel":"telegram","id":"telegram:${CHAT}"}`);
    expect(JSON.stringify(auditLines())).not.toContain("telegram:999");
  });

  it("edits the message when the request is answered elsewhere (the API, with the approvers' token)", async () => {
    const call = waitingWrite("/tmp/serve-api-answer");
    const message = await messageFor("/tmp/serve-api-answer");
    const pending = (await (
      await fetch(`${ready.url}/v1/consent?status=pending`, { headers: { authorization: `Bearer ${APPROVER}` } })
    ).json()) as { requests: { id: string }[] };
    const id = pending.requests[0]?.id ?? "";
    const res = await fetch(`${ready.url}/v1/consent/${id}/response`, {
      method: "POST",
      headers: { authorization: `Bearer ${APPROVER}`, "content-type": "application/json" },
      body: JSON.stringify({ decision: "denied", reason: "not that file", approver_id: "ops" }),
    });
    expect(res.status).toBe(200);
    expect(((await (await call).json()) as { route: string }).route).toBe("refuse");
    await vi.waitFor(
      () => {
        const edits = bot.calls.filter((c) => c.method === "editMessageText" && c.params["message_id"] === message.id);
        expect(String(edits.at(-1)?.params["text"])).toMatch(/denied by .*api:ops/);
      },
      { timeout: 10_000, interval: 50 },
    );
  });
});

describe("an answer a channel received for a request this node does not hold", () => {
  it("a Telegram press on another node's request is recorded in the shared table, as a telegram answer", async () => {
    const handle = await openPendingConsent({ statePath: join(home, "state.db") });
    if (handle === null) throw new Error("no pending table");
    try {
      // raised by another node on the same state (no waiting call here): only the table knows it
      const id = `cr_${"7".repeat(32)}`;
      await handle.store.insert({
        id,
        nonce: "n".repeat(32),
        server: "http",
        tool: "write_file",
        request: { id, action: { tool: "write_file", parameters: { path: "/tmp/other-node" } } },
        reasons: [],
        createdAtMs: Date.now(),
        expiresAtMs: Date.now() + 60_000,
      });
      // this node's bot is polling (it sent messages above); the press reaches it
      bot.pressButton({ chatId: 999, messageId: 9_999, data: `acp:d:${id}` });
      bot.pressButton({ chatId: CHAT, messageId: 9_999, data: `acp:d:${id}` });
      const row = await vi.waitFor(
        async () => {
          const r = await handle.store.get(id);
          if (r?.status !== "denied") throw new Error(`still ${String(r?.status)}`);
          return r;
        },
        { timeout: 20_000, interval: 50 },
      );
      expect(row.answer).toMatchObject({ decision: "denied", approver: `telegram:${CHAT}`, channel: "telegram" });
    } finally {
      await handle.close();
    }
  });

  it("is recorded in the pending table with its channel when it fits; refused (nothing recorded) when it does not", async () => {
    // a second opening of the same state.db's pending table stands for the node that received the press
    const handle = await openPendingConsent({ statePath: join(home, "state.db") });
    if (handle === null) throw new Error("no pending table");
    const stores = { pending: handle.store };
    try {
      const call = waitingWrite("/tmp/serve-forwarded");
      await messageFor("/tmp/serve-forwarded");
      const row = (await stores.pending.listPending(Date.now())).find((r) =>
        JSON.stringify(r.request).includes("/tmp/serve-forwarded"),
      );
      if (row === undefined) throw new Error("no pending row");
      const press = { decision: "denied" as const, approverId: `telegram:${CHAT}`, channel: "telegram" };
      const now = new Date();
      expect(await recordForwardedAnswer(stores.pending, "cr_" + "0".repeat(32), press, undefined, now)).toBe(false);
      expect(await recordForwardedAnswer(stores.pending, row.id, press, "another-nonce", now)).toBe(false);
      // a window longer than seven days is what the waiting call would refuse
      const tooLong = {
        decision: "approved" as const,
        approverId: `telegram:${CHAT}`,
        scope: { until: new Date(Date.now() + 30 * 86_400_000).toISOString() },
      };
      expect(await recordForwardedAnswer(stores.pending, row.id, tooLong, row.nonce, now)).toBe(false);
      expect((await stores.pending.get(row.id))?.status).toBe("pending");
      expect(await recordForwardedAnswer(stores.pending, row.id, press, row.nonce, now)).toBe(true);
      const answer = (await (await call).json()) as { route: string; consent?: { outcome: string } };
      expect(answer).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
      const denied = auditLines().filter((e) => e.event_type === "consent_denied");
      expect(JSON.stringify(denied.at(-1))).toContain(`"approver":{"channel":"telegram","id":"telegram:${CHAT}"}`);
      // once answered, a second press records nothing
      expect(await recordForwardedAnswer(stores.pending, row.id, press, row.nonce, new Date())).toBe(false);
    } finally {
      await handle.close();
    }
  });
});
