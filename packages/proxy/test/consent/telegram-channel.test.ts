import { describe, expect, it } from "vitest";
import {
  createConsentBroker,
  createTelegramChannel,
  formatTelegramMessage,
  parseCallbackData,
  type ConsentChannel,
  type ConsentRequestV02,
  type HumanAnswer,
} from "../../src/consent/index.js";
import { runChannelCase, type ChannelHarness } from "./channel.case.js";
import { ManualTime, countingRandom, createTestProofs, eventually, makeAsk } from "./fixtures.js";
import { recordDeliveries } from "./recording.js";
import { startTelegramStandIn, type TelegramStandIn } from "./telegram-stand-in.js";

const TOKEN = "123456:test-token";
const CHAT = 777;
const OTHER_CHAT = 666;

function press(api: TelegramStandIn, messageId: number, data: string, chatId = CHAT): string {
  return `cbq-${api.pressButton({ chatId, messageId, data })}`;
}

async function telegramHarness(clock?: () => Date): Promise<ChannelHarness> {
  const api = await startTelegramStandIn(TOKEN);
  const inner = createTelegramChannel({
    token: TOKEN,
    chatId: CHAT,
    apiRoot: api.apiRoot,
    pollTimeoutSeconds: 1,
    ...(clock !== undefined ? { clock } : {}),
  });
  const { channel, requests } = recordDeliveries(inner);
  const messageOf = (id: string) => api.messages.find((m) => m.text.includes(id));
  const answered = (cbq: string) =>
    eventually(() =>
      api.calls.find((c) => c.method === "answerCallbackQuery" && c.params["callback_query_id"] === cbq),
    );
  const button = async (id: string, kind: "a" | "s" | "d") => {
    const message = await eventually(() => messageOf(id));
    await answered(press(api, message.message_id, `acp:${kind}:${id}`));
  };
  return {
    channel,
    deliveries: () => requests.length,
    shown: async (index) => {
      const request = await eventually(() => requests[index]);
      const message = await eventually(() => messageOf(request.id));
      return { id: request.id, nonce: request.nonce, text: `${message.text}\n${JSON.stringify(message.reply_markup)}` };
    },
    approve: (shown, scope = "once") => button(shown.id, scope === "session" ? "s" : "a"),
    approveWithModifications: () => Promise.reject(new Error("telegram cannot edit arguments")),
    deny: (shown) => button(shown.id, "d"),
    forge: async (shown) => {
      const message = await eventually(() => messageOf(shown.id));
      const call = await answered(press(api, message.message_id, `acp:a:${shown.id}`, OTHER_CHAT));
      expect(String(call.params["text"])).toContain("may not decide");
      const wrongMessage = await answered(press(api, message.message_id + 1000, `acp:a:${shown.id}`));
      expect(String(wrongMessage.params["text"])).toContain("no longer waiting");
    },
    settledAs: async (shown) => {
      const message = await eventually(() => messageOf(shown.id));
      const edit = await eventually(() =>
        api.calls.find((c) => c.method === "editMessageText" && c.params["message_id"] === message.message_id),
      );
      return String(edit.params["text"]).split("\n").pop() ?? "";
    },
    close: async () => {
      await channel.close?.();
      await api.close();
    },
  };
}

runChannelCase("telegram", (time) => telegramHarness(time.clock), {
  canModify: false,
  editRefusedAs:
    /^⛔ approved with edits by alice via cli, but the edited arguments are refused by policy rule `no-etc`: rule `no-etc` matched: deny \(path .*\/etc\/shadow.*, with Bearer \[redacted\]\)/,
});

/**
 * A broker with the Telegram channel (and `others`, after it), against a fresh stand-in; both closed after
 * `body`.
 */
async function withTelegramBroker(
  body: (api: TelegramStandIn, broker: ReturnType<typeof createConsentBroker>) => Promise<void>,
  others: readonly ConsentChannel[] = [],
): Promise<void> {
  const api = await startTelegramStandIn(TOKEN);
  const channel = createTelegramChannel({ token: TOKEN, chatId: CHAT, apiRoot: api.apiRoot, pollTimeoutSeconds: 1 });
  try {
    const time = new ManualTime();
    const broker = createConsentBroker({
      channels: [channel, ...others],
      ...createTestProofs(),
      clock: time.clock,
      timers: time,
      random: countingRandom(),
    });
    await body(api, broker);
  } finally {
    await channel.close?.();
    await api.close();
  }
}

/** The Bot API calls about the message and the press, in order: what the person sees change. */
function seen(api: TelegramStandIn): string[] {
  return api.calls
    .filter((c) =>
      ["sendMessage", "editMessageText", "editMessageReplyMarkup", "answerCallbackQuery"].includes(c.method),
    )
    .map((c) =>
      c.method === "sendMessage"
        ? "sendMessage"
        : `${c.method}: ${c.method === "editMessageText" ? String(c.params["text"]).split("\n").pop() : String(c.params["text"])}`,
    );
}

/** A channel that keeps the shared record (as the pending table does) and says another answer was recorded first. */
function recordedFirst(answer: HumanAnswer): ConsentChannel {
  return {
    name: "cli",
    isAvailable: () => true,
    deliver: ({ signal }) =>
      new Promise<HumanAnswer>((_resolve, reject) =>
        signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
      ),
    arbitrate: () => ({ kind: "taken", answer }),
  };
}

describe("a press goes straight to how the request ended", () => {
  it("approve: the message is edited once, to approved, and only then is the press answered, saying the same", async () => {
    await withTelegramBroker(async (api, broker) => {
      const pending = broker.ask(makeAsk());
      const message = await eventually(() => api.messages[0]);
      const id = /cr_[0-9a-f]{32}/.exec(message.text)?.[0] ?? "";
      api.pressButton({ chatId: CHAT, messageId: message.message_id, data: `acp:a:${id}` });
      expect((await pending).kind).toBe("approved");
      await eventually(() => api.calls.find((c) => c.method === "answerCallbackQuery"));
      const final = `✅ approved by Person (${CHAT}) via telegram`;
      expect(seen(api)).toEqual(["sendMessage", `editMessageText: ${final}`, `answerCallbackQuery: ${final}`]);
    });
  });

  it("an approve press whose answer is not used (a deny recorded first) never shows approved", async () => {
    const alice: HumanAnswer = { decision: "denied", approverId: "cli:alice", reason: "not today" };
    await withTelegramBroker(
      async (api, broker) => {
        const pending = broker.ask(makeAsk());
        const message = await eventually(() => api.messages[0]);
        const id = /cr_[0-9a-f]{32}/.exec(message.text)?.[0] ?? "";
        api.pressButton({ chatId: CHAT, messageId: message.message_id, data: `acp:a:${id}` });
        const outcome = await pending;
        expect(outcome.kind).toBe("denied");
        await eventually(() => api.calls.find((c) => c.method === "answerCallbackQuery"));
        const final = "❌ denied by alice via cli";
        expect(seen(api)).toEqual(["sendMessage", `editMessageText: ${final}`, `answerCallbackQuery: ${final}`]);
      },
      [recordedFirst(alice)],
    );
  });
});

describe("telegram channel specifics", () => {
  it("sends approve, approve-for-session and deny buttons that fit Telegram's 64-byte callback data", async () => {
    await withTelegramBroker(async (api, broker) => {
      const pending = broker.ask(makeAsk());
      const message = await eventually(() => api.messages[0]);
      expect(message.chat_id).toBe(String(CHAT));
      const buttons = message.reply_markup?.inline_keyboard.flat() ?? [];
      expect(buttons.map((b) => b.text)).toEqual(["✅ Approve", "🔁 Approve for session", "❌ Deny"]);
      for (const b of buttons) {
        expect(Buffer.byteLength(b.callback_data)).toBeLessThanOrEqual(64);
        expect(parseCallbackData(b.callback_data)).not.toBeNull();
      }
      api.pressButton({ chatId: CHAT, messageId: message.message_id, data: buttons[2]?.callback_data ?? "" });
      const outcome = await pending;
      expect(outcome.kind).toBe("denied");
      if (outcome.kind === "denied") expect(outcome.reason).toContain(`\`${CHAT}\` via telegram`);
    });
  });

  it("edits the message of a request withdrawn while Telegram was still answering sendMessage", async () => {
    await withTelegramBroker(async (api, broker) => {
      const release = api.holdSends();
      const controller = new AbortController();
      const pending = broker.ask(makeAsk({ signal: controller.signal }));
      const message = await eventually(() => api.messages[0]);
      controller.abort();
      expect(await pending).toEqual({ kind: "withdrawn" });
      release();
      const edit = await eventually(() =>
        api.calls.find((c) => c.method === "editMessageText" && c.params["message_id"] === message.message_id),
      );
      expect(String(edit.params["text"])).toMatch(/withdrawn/);
      expect(edit.params["reply_markup"]).toEqual({ inline_keyboard: [] });
    });
  });

  it("shows a tool name's or a reason's control and bidi characters escaped in the message", () => {
    const request = {
      id: "cr_00000000000000000000000000000001",
      expires_at: "2026-01-01T00:02:00.000Z",
      action: {
        server: "evil",
        tool: "send\ntool: read_file",
        category: "write",
        risk_level: "medium",
        parameters: {},
      },
      policy: { rule_id: "policy:ask-writes" },
      agent: { name: "agent" },
    } as unknown as ConsentRequestV02;
    const text = formatTelegramMessage(request, [
      { source: "session", code: "x", message: "to `a\u202eelpmaxe.rekcatta@b`" },
    ]);
    expect(text).toContain("tool: send\\u000atool: read_file\n");
    expect(text).toContain("\n\u200e- \u2066to `a\\u202eelpmaxe.rekcatta@b`\u2069\n");
    expect(text).not.toContain("\u202e");
    // an argument value spelling an escape is shown as written, not turned into a line break
    const spelled = formatTelegramMessage(
      { ...request, action: { ...request.action, parameters: { to: "x\\u000atool: read_file" } } },
      [],
    );
    expect(spelled.split("\n").filter((l) => l.startsWith("tool:"))).toHaveLength(1);
  });

  it("names what asked: the rule, or the session runtime and its check when no rule did (not `default`)", () => {
    const request = {
      id: "cr_00000000000000000000000000000003",
      expires_at: "2026-01-01T00:02:00.000Z",
      action: { server: "mail", tool: "send", category: "communication", risk_level: "high", parameters: {} },
      policy: { rule_id: "default" },
      agent: { name: "agent" },
    } as unknown as ConsentRequestV02;
    const bySession = formatTelegramMessage(request, [
      { source: "session", code: "provenance_tainted", message: "text from `mail.read` wants to send email" },
    ]);
    expect(bySession).toContain("\nasked by: session (provenance_tainted)\n");
    expect(bySession).not.toContain("rule: default");
    const byDefault = formatTelegramMessage(request, [
      { source: "policy", code: "default_action", message: "no rule matched: ask" },
    ]);
    expect(byDefault).toContain("\nrule: default\n");
  });

  it("ignores button data that is not ours", () => {
    expect(parseCallbackData("acp:x:cr_00")).toBeNull();
    expect(parseCallbackData(`acp:a:cr_${"a".repeat(32)}`)).toEqual({ button: "a", requestId: `cr_${"a".repeat(32)}` });
  });
});
