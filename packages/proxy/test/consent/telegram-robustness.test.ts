/**
 * The Telegram channel as a person approving from a phone meets it, and as the Bot API misbehaves: a group or a
 * channel where others can press the buttons, a chat configured as `@channelname`, rate limits (429 retry_after)
 * and 5xx, a Bot API that stops answering, polling conflicts, stale buttons, long or hostile text, and the bot
 * token kept out of every error.
 */
import { createRequire } from "node:module";
import { format, inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  createTelegramChannel,
  formatTelegramMessage,
  realTimers,
  type ConsentBrokerHandle,
  type ConsentChannel,
  type ConsentRequestV02,
  type ConsentResponseV02,
  type ConsentTimers,
  type TelegramChannelOptions,
} from "../../src/consent/index.js";
import { ManualTime, eventually, makeAsk, manualBroker } from "./fixtures.js";
import { startTelegramStandIn, type TelegramStandIn } from "./telegram-stand-in.js";

const TOKEN = "987654:secret-bot-token-value";
const CHAT = 777;

/**
 * Timers that record each wait under 10 s and fire it at once (a retry's wait, checked without waiting); the
 * 10 s limits on each call run for real.
 */
function recordingTimers(): ConsentTimers & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    setTimeout: (cb, ms) => {
      if (ms >= 10_000) return realTimers.setTimeout(cb, ms);
      delays.push(ms);
      return realTimers.setTimeout(cb, 0);
    },
    clearTimeout: (h) => realTimers.clearTimeout(h),
  };
}

async function withBroker(
  options: Partial<TelegramChannelOptions> | ((time: ManualTime) => Partial<TelegramChannelOptions>),
  body: (ctx: {
    api: TelegramStandIn;
    broker: ConsentBrokerHandle;
    channel: ConsentChannel;
    time: ManualTime;
  }) => Promise<void>,
  prepare: (api: TelegramStandIn) => void = () => undefined,
): Promise<void> {
  const api = await startTelegramStandIn(TOKEN);
  prepare(api);
  const time = new ManualTime();
  const channel = createTelegramChannel({
    token: TOKEN,
    chatId: CHAT,
    apiRoot: api.apiRoot,
    pollTimeoutSeconds: 1,
    ...(typeof options === "function" ? options(time) : options),
  });
  try {
    const broker = manualBroker([channel], time);
    await body({ api, broker, channel, time });
  } finally {
    await channel.close?.();
    await api.close();
  }
}

const answerTo = (api: TelegramStandIn, update: number) =>
  eventually(() =>
    api.calls.find((c) => c.method === "answerCallbackQuery" && c.params["callback_query_id"] === `cbq-${update}`),
  );

describe("who may decide", () => {
  it("in a group, only the group's administrators decide; a member's press changes nothing", async () => {
    const GROUP = -100200;
    await withBroker({ chatId: GROUP }, async ({ api, broker }) => {
      api.setAdmins(GROUP, [1]);
      const pending = broker.ask(makeAsk());
      const message = await eventually(() => api.messages[0]);
      const data = message.reply_markup?.inline_keyboard[0]?.[0]?.callback_data ?? "";
      const member = api.pressButton({
        chatId: GROUP,
        chatType: "supergroup",
        messageId: message.message_id,
        data,
        fromId: 2,
      });
      expect(String((await answerTo(api, member)).params["text"])).toMatch(/administrators/);
      const admin = api.pressButton({
        chatId: GROUP,
        chatType: "supergroup",
        messageId: message.message_id,
        data,
        fromId: 1,
      });
      await answerTo(api, admin);
      const outcome = await pending;
      expect(outcome.kind).toBe("approved");
      if (outcome.kind === "approved") {
        expect((outcome.consentResponse as ConsentResponseV02).approver.id).toBe("telegram:1");
      }
    });
  });

  it("a chat configured as @channelname is recognised by its username, and only its administrators decide", async () => {
    await withBroker({ chatId: "@acp_approvals" }, async ({ api, broker }) => {
      const CHANNEL = -100300;
      api.setChat("acp_approvals", { id: CHANNEL, type: "channel" });
      api.setAdmins(CHANNEL, [5]);
      const pending = broker.ask(makeAsk());
      const message = await eventually(() => api.messages[0]);
      const deny = message.reply_markup?.inline_keyboard[1]?.[0]?.callback_data ?? "";
      const at = { chatType: "channel" as const, messageId: message.message_id, data: deny };
      const subscriber = api.pressButton({ chatId: CHANNEL, chatUsername: "ACP_Approvals", fromId: 9, ...at });
      expect(String((await answerTo(api, subscriber)).params["text"])).toMatch(/administrators/);
      const elsewhere = api.pressButton({ chatId: -100999, chatUsername: "other_chan", fromId: 5, ...at });
      expect(String((await answerTo(api, elsewhere)).params["text"])).toMatch(/may not decide/);
      api.pressButton({ chatId: CHANNEL, chatUsername: "ACP_Approvals", fromId: 5, ...at });
      expect((await pending).kind).toBe("denied");
    });
  });
});

describe("a press once the request is over", () => {
  it("is told the request no longer waits, not 'approved', while the message is still being edited", async () => {
    await withBroker({}, async ({ api, channel, time }) => {
      const control = new AbortController();
      const delivered = channel.deliver({
        request: {
          type: "consent_request",
          version: "0.2.0",
          id: `cr_${"c".repeat(32)}`,
          timestamp: time.clock().toISOString(),
          expires_at: new Date(time.clock().getTime() + 60_000).toISOString(),
          agent: { id: "a", name: "agent", command: "agent" },
          action: {
            tool: "write_file",
            server: "fs",
            category: "write",
            risk_level: "medium",
            parameters: { path: "/tmp/x" },
            description: "",
          },
          policy: { rule_id: "policy:ask-writes", rule_name: "ask-writes", required_level: "ask" },
          nonce: "n_00000000-0000-4000-8000-000000000001",
        },
        reasons: [],
        sessionId: "s",
        signal: control.signal,
      });
      const message = await eventually(() => api.messages[0]);
      // the request expires; the broker has not yet told the channel how it ended (it settles next)
      control.abort(new Error("expired"));
      await expect(delivered).rejects.toThrow();
      const approve = message.reply_markup?.inline_keyboard[0]?.[0]?.callback_data ?? "";
      const press = api.pressButton({ chatId: CHAT, messageId: message.message_id, data: approve });
      expect(String((await answerTo(api, press)).params["text"])).toBe(
        "this request is no longer waiting for an answer",
      );
    });
  });
});

describe("the answer to a press", () => {
  it("waits for the request's end; without one within 10 s it is answered blank, never 'approved'", async () => {
    await withBroker(
      (time) => ({ timers: time }),
      async ({ api, channel, time }) => {
        const request = {
          type: "consent_request",
          version: "0.2.0",
          id: `cr_${"d".repeat(32)}`,
          timestamp: time.clock().toISOString(),
          expires_at: new Date(time.clock().getTime() + 60_000).toISOString(),
          agent: { id: "a", name: "agent", command: "agent" },
          action: {
            tool: "write_file",
            server: "fs",
            category: "write",
            risk_level: "medium",
            parameters: { path: "/tmp/x" },
            description: "",
          },
          policy: { rule_id: "policy:ask-writes", rule_name: "ask-writes", required_level: "ask" },
          nonce: "n_00000000-0000-4000-8000-000000000002",
        } as const;
        const delivered = channel.deliver({
          request,
          reasons: [],
          sessionId: "s",
          signal: new AbortController().signal,
        });
        const message = await eventually(() => api.messages[0]);
        const approve = message.reply_markup?.inline_keyboard[0]?.[0]?.callback_data ?? "";
        const press = api.pressButton({ chatId: CHAT, messageId: message.message_id, data: approve });
        expect(await delivered).toMatchObject({ decision: "approved" });
        // the answer is taken, the request has not ended: the press is not answered yet
        expect(api.calls.filter((c) => c.method === "answerCallbackQuery")).toEqual([]);
        time.advance(10_000);
        const answered = await answerTo(api, press);
        expect(answered.params["text"]).toBeUndefined();
        // the request's end still edits the message, and the press is not answered twice
        await channel.settle?.(request, "approved");
        expect(api.calls.filter((c) => c.method === "editMessageText")).toHaveLength(1);
        expect(api.calls.filter((c) => c.method === "answerCallbackQuery")).toHaveLength(1);
      },
    );
  });
});

describe("a Bot API that misbehaves", () => {
  it("waits out a 429's retry_after and retries a 5xx before giving up on sendMessage", async () => {
    const timers = recordingTimers();
    await withBroker(
      { timers },
      async ({ api, broker }) => {
        const pending = broker.ask(makeAsk());
        const message = await eventually(() => api.messages[0]);
        expect(api.calls.filter((c) => c.method === "sendMessage")).toHaveLength(3);
        expect(timers.delays).toContain(7_000);
        api.pressButton({
          chatId: CHAT,
          messageId: message.message_id,
          data: `acp:a:${message.text.match(/cr_[0-9a-f]{32}/)?.[0]}`,
        });
        expect((await pending).kind).toBe("approved");
      },
      (api) =>
        api.failNext(
          "sendMessage",
          { error_code: 429, description: "Too Many Requests: retry after 7", retry_after: 7 },
          { error_code: 502, description: "Bad Gateway" },
        ),
    );
  });

  it("does not hold the agent's call when editMessageText never answers", async () => {
    await withBroker(
      (time) => ({ timers: time }),
      async ({ api, broker, time }) => {
        api.hang("editMessageText");
        const pending = broker.ask(makeAsk());
        const message = await eventually(() => api.messages[0]);
        const id = /cr_[0-9a-f]{32}/.exec(message.text)?.[0] ?? "";
        api.pressButton({ chatId: CHAT, messageId: message.message_id, data: `acp:d:${id}` });
        await eventually(() => api.calls.find((c) => c.method === "editMessageText"));
        const done: { kind?: string } = {};
        void pending.then((o) => (done.kind = o.kind));
        await eventually(() => {
          if (done.kind === undefined) time.advance(1_000);
          return done.kind;
        });
        expect(done.kind).toBe("denied");
      },
    );
  });

  it("keeps polling after getUpdates fails with 409 (another process polled the bot)", async () => {
    const timers = recordingTimers();
    await withBroker(
      { timers },
      async ({ api, broker }) => {
        const pending = broker.ask(makeAsk());
        const message = await eventually(() => api.messages[0]);
        const id = /cr_[0-9a-f]{32}/.exec(message.text)?.[0] ?? "";
        await eventually(() => api.calls.filter((c) => c.method === "getUpdates").length >= 2);
        api.pressButton({ chatId: CHAT, messageId: message.message_id, data: `acp:d:${id}` });
        expect((await pending).kind).toBe("denied");
      },
      (api) =>
        api.failNext("getUpdates", {
          error_code: 409,
          description: "Conflict: terminated by other getUpdates request",
        }),
    );
  });

  it("never puts the bot token in an error, whatever fails", async () => {
    const api = await startTelegramStandIn(TOKEN);
    const apiRoot = api.apiRoot;
    await api.close();
    const channel = createTelegramChannel({ token: TOKEN, chatId: CHAT, apiRoot, timers: recordingTimers() });
    try {
      const request = { ...sampleRequest() };
      const error = await channel
        .deliver({ request, reasons: [], sessionId: "s", signal: new AbortController().signal })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(Error);
      const everything = `${String(error)} ${inspect(error, { depth: 10, showHidden: true })} ${JSON.stringify(error)}`;
      expect(everything).not.toContain("secret-bot-token-value");
      expect(everything).not.toContain(TOKEN);
    } finally {
      await channel.close?.();
    }
  });
});

describe("grammY's own debug output (DEBUG=grammy:*)", () => {
  it("never shows the bot token when polling fails on the network, and close() still succeeds", async () => {
    const createDebug = createRequire(import.meta.url)("debug") as {
      enable(namespaces: string): void;
      disable(): string;
      log: (...args: unknown[]) => void;
    };
    const captured: string[] = [];
    const previousLog = createDebug.log;
    createDebug.log = (...args: unknown[]) => void captured.push(format(...args));
    createDebug.enable("grammy:*");
    const api = await startTelegramStandIn(TOKEN);
    const channel = createTelegramChannel({
      token: TOKEN,
      chatId: CHAT,
      apiRoot: api.apiRoot,
      pollTimeoutSeconds: 1,
      timers: recordingTimers(),
    });
    try {
      const controller = new AbortController();
      const delivered = channel.deliver({
        request: sampleRequest(),
        reasons: [],
        sessionId: "s",
        signal: controller.signal,
      });
      await eventually(() => api.calls.find((c) => c.method === "getUpdates"));
      await api.close();
      await eventually(() => captured.some((line) => line.includes("getUpdates failed")));
      controller.abort("withdrawn");
      await delivered.catch(() => undefined);
      expect(captured.join("\n")).not.toContain("secret-bot-token-value");
    } finally {
      createDebug.disable();
      createDebug.log = previousLog;
      await channel.close?.();
    }
  });
});

describe("what the person sees", () => {
  it("removes the buttons left on a message whose request ended here; leaves a message it knows nothing of", async () => {
    const forwarded: string[] = [];
    const forward = (id: string): boolean => {
      forwarded.push(id);
      return false;
    };
    await withBroker({ forward }, async ({ api, broker }) => {
      // the closing edit fails: the buttons stay on the message
      api.failNext("editMessageText", { error_code: 400, description: "Bad Request: message can't be edited" });
      const pending = broker.ask(makeAsk());
      const message = await eventually(() => api.messages[0]);
      const id = /cr_[0-9a-f]{32}/.exec(message.text)?.[0] ?? "";
      api.pressButton({ chatId: CHAT, messageId: message.message_id, data: `acp:d:${id}` });
      expect((await pending).kind).toBe("denied");
      await eventually(() => api.calls.find((c) => c.method === "editMessageText"));
      // a second press on the decided message: refused, and its buttons are removed
      const again = api.pressButton({ chatId: CHAT, messageId: message.message_id, data: `acp:a:${id}` });
      expect(String((await answerTo(api, again)).params["text"])).toMatch(/no longer waiting/);
      const cleared = await eventually(() =>
        api.calls.find((c) => c.method === "editMessageReplyMarkup" && c.params["message_id"] === message.message_id),
      );
      expect(cleared.params["reply_markup"]).toEqual({ inline_keyboard: [] });
      expect(forwarded).toEqual([]);
      // a message of a request nobody here knows (another home on the same bot): refused, left alone
      const unknown = `cr_${"9".repeat(32)}`;
      const stale = api.pressButton({ chatId: CHAT, messageId: 55, data: `acp:a:${unknown}` });
      expect(String((await answerTo(api, stale)).params["text"])).toMatch(/no longer waiting/);
      expect(forwarded).toEqual([unknown]);
      expect(api.calls.filter((c) => c.method === "editMessageReplyMarkup" && c.params["message_id"] === 55)).toEqual(
        [],
      );
    });
  });

  it("hands a press on another proxy's request to `forward` (one bot, several proxies), only from who may decide", async () => {
    const GROUP = -100400;
    const forwarded: { id: string; answer: unknown }[] = [];
    const forward = (id: string, answer: unknown) => forwarded.push({ id, answer }) > 0;
    await withBroker({ chatId: GROUP, forward }, async ({ api, broker }) => {
      api.setAdmins(GROUP, [1]);
      const pending = broker.ask(makeAsk());
      const own = await eventually(() => api.messages[0]);
      const foreign = `cr_${"a".repeat(32)}`;
      const at = { chatId: GROUP, chatType: "group" as const, messageId: 9, data: `acp:s:${foreign}` };
      const member = api.pressButton({ ...at, fromId: 2 });
      expect(String((await answerTo(api, member)).params["text"])).toMatch(/administrators/);
      expect(forwarded).toEqual([]);
      const admin = api.pressButton({ ...at, fromId: 1 });
      expect(String((await answerTo(api, admin)).params["text"])).toBe(
        "your approve is recorded: the message will say how the request ended",
      );
      expect(forwarded).toEqual([
        {
          id: foreign,
          answer: { decision: "approved", scope: "session", approverId: "telegram:1", channel: "telegram" },
        },
      ]);
      expect(api.calls.filter((c) => c.method === "editMessageReplyMarkup")).toEqual([]);
      const id = /cr_[0-9a-f]{32}/.exec(own.text)?.[0] ?? "";
      api.pressButton({ chatId: GROUP, chatType: "group", messageId: own.message_id, data: `acp:d:${id}`, fromId: 1 });
      expect((await pending).kind).toBe("denied");
    });
  });

  it("sends plain text (no parse_mode, no link preview): markup and URLs in arguments are shown as written", async () => {
    await withBroker({}, async ({ api, broker }) => {
      const pending = broker.ask(
        makeAsk({ arguments: { content: "<b>*bold*</b> [x](http://e.test) `c`", url: "https://attacker.test/x?d=1" } }),
      );
      const call = await eventually(() => api.calls.find((c) => c.method === "sendMessage"));
      expect(call.params["parse_mode"]).toBeUndefined();
      expect(call.params["entities"]).toBeUndefined();
      // no link preview: Telegram would fetch the agent's URL before anyone approved anything
      expect(call.params["link_preview_options"]).toEqual({ is_disabled: true });
      expect(String(call.params["text"])).toContain("<b>*bold*</b> [x](http://e.test) `c`");
      const message = await eventually(() => api.messages[0]);
      const id = /cr_[0-9a-f]{32}/.exec(message.text)?.[0] ?? "";
      api.pressButton({ chatId: CHAT, messageId: message.message_id, data: `acp:d:${id}` });
      await pending;
      const edit = await eventually(() => api.calls.find((c) => c.method === "editMessageText"));
      expect(edit.params["link_preview_options"]).toEqual({ is_disabled: true });
    });
  });

  it("shows a line or paragraph separator (a line break in Telegram) escaped", () => {
    const text = formatTelegramMessage(sampleRequest({ tool: "send\u2028tool: read_file\u2029" }), []);
    expect(text).toContain("tool: send\\u2028tool: read_file\\u2029\n");
    expect(text).not.toMatch(/[\u2028\u2029]/);
  });

  it("fits Telegram's 4096 characters with long or escaped fields, keeping the reasons, expiry and id", () => {
    const request = sampleRequest({
      tool: `t${"\u202e".repeat(3000)}`,
      parameters: { content: "\u202e".repeat(5000), emoji: "😀".repeat(3000) },
    });
    const reasons = Array.from({ length: 3 }, (_, i) => ({
      source: "policy" as const,
      code: "x",
      message: `reason ${i} ${"\u2066".repeat(2000)}`,
    }));
    const text = formatTelegramMessage(request, reasons);
    expect(text.length).toBeLessThanOrEqual(4096);
    expect(text).toContain(`id: ${request.id}`);
    expect(text).toContain(`expires: ${request.expires_at}`);
    for (const i of [0, 1, 2]) expect(text).toContain(`\n\u200e- \u2066reason ${i} `);
    expect(text).toMatch(/…\[\d+ characters not shown\]…/);
    expect(text).not.toMatch(/[\u202a-\u202e]/);
    // the only isolates are the message's own: around each argument's path and value, and each reason
    const isolating = text.split("\n").filter((line) => /[\u2066-\u2069]/.test(line));
    expect(isolating.length).toBeGreaterThan(3);
    for (const line of isolating) {
      expect(line).toMatch(
        /^\u200e(• \u2066[^\u2066-\u2069]*\u2069: \u2066[^\u2066-\u2069]*|- \u2066[^\u2066-\u2069]*)\u2069$/,
      );
    }
    // no half of a surrogate pair left by a cut
    expect(text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});

function sampleRequest(action: { tool?: string; parameters?: Record<string, unknown> } = {}): ConsentRequestV02 {
  return {
    type: "consent_request",
    version: "0.2.0",
    id: "cr_0123456789abcdef0123456789abcdef",
    timestamp: "2026-01-15T12:00:00.000Z",
    expires_at: "2026-01-15T12:02:00.000Z",
    agent: { id: "a", name: "agent", command: "agent" },
    action: {
      tool: action.tool ?? "write_file",
      server: "fs",
      category: "write",
      risk_level: "medium",
      parameters: action.parameters ?? { path: "/tmp/x" },
      description: "",
    },
    policy: { rule_id: "policy:ask-writes", rule_name: "ask-writes", required_level: "ask" },
    nonce: "n_00000000-0000-4000-8000-000000000000",
  };
}
