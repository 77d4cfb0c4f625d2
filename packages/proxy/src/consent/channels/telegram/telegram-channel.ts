import { Bot, type Context } from "grammy";
import { abortError } from "../../timers.js";
import type {
  ChannelDelivery,
  ChannelSettlement,
  ConsentChannel,
  ConsentRequestV02,
  HumanAnswer,
} from "../../types.js";
import { formatSettledMessage, formatTelegramMessage, keyboardOf, parseCallbackData } from "./message.js";

/** What the Telegram channel needs. */
export interface TelegramChannelOptions {
  readonly token: string;
  /** The only chat whose buttons may decide. */
  readonly chatId: string | number;
  /** The Bot API root (no trailing slash). Default `https://api.telegram.org`; tests point it at a stand-in. */
  readonly apiRoot?: string;
  /** Long-polling timeout in seconds. Default 30. */
  readonly pollTimeoutSeconds?: number;
}

interface Sent {
  readonly nonce: string;
  readonly messageId: number;
  readonly text: string;
  resolve?: (answer: HumanAnswer) => void;
}

class TelegramChannel implements ConsentChannel {
  readonly name = "telegram";
  readonly #o: TelegramChannelOptions;
  readonly #bot: Bot;
  readonly #sent = new Map<string, Sent>();
  /**
   * Requests whose message is still being sent, with how they ended if they ended meanwhile (a request withdrawn
   * or expired before Telegram answered `sendMessage`): the message is edited as soon as its id is known, so no
   * live buttons stay behind.
   */
  readonly #sending = new Map<string, { outcome?: ChannelSettlement }>();
  #polling: Promise<void> | null = null;

  constructor(options: TelegramChannelOptions) {
    this.#o = options;
    this.#bot = new Bot(options.token, options.apiRoot === undefined ? {} : { client: { apiRoot: options.apiRoot } });
    this.#bot.on("callback_query:data", (ctx) => this.#onCallback(ctx));
    this.#bot.catch(() => undefined);
  }

  isAvailable(): boolean {
    return this.#o.token !== "" && String(this.#o.chatId) !== "";
  }

  async deliver(delivery: ChannelDelivery): Promise<HumanAnswer> {
    const { request, signal } = delivery;
    const text = formatTelegramMessage(request, delivery.reasons);
    const sending: { outcome?: ChannelSettlement } = {};
    this.#sending.set(request.id, sending);
    let message: Awaited<ReturnType<Bot["api"]["sendMessage"]>>;
    try {
      message = await this.#bot.api.sendMessage(this.#o.chatId, text, { reply_markup: keyboardOf(request.id) });
    } finally {
      this.#sending.delete(request.id);
    }
    const sent: Sent = { nonce: request.nonce, messageId: message.message_id, text };
    if (sending.outcome !== undefined) {
      await this.#edit(sent, sending.outcome).catch(() => undefined);
      throw abortError(signal);
    }
    this.#sent.set(request.id, sent);
    this.#startPolling();
    return new Promise<HumanAnswer>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal));
      sent.resolve = (answer) => {
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  async settle(request: ConsentRequestV02, outcome: ChannelSettlement): Promise<void> {
    const sending = this.#sending.get(request.id);
    if (sending !== undefined) {
      sending.outcome = outcome;
      return;
    }
    const sent = this.#sent.get(request.id);
    if (sent === undefined) return;
    this.#sent.delete(request.id);
    await this.#edit(sent, outcome);
  }

  async #edit(sent: Sent, outcome: ChannelSettlement): Promise<void> {
    await this.#bot.api.editMessageText(this.#o.chatId, sent.messageId, formatSettledMessage(sent.text, outcome), {
      reply_markup: { inline_keyboard: [] },
    });
  }

  async close(): Promise<void> {
    if (this.#bot.isRunning()) await this.#bot.stop();
    await this.#polling;
  }

  #startPolling(): void {
    if (this.#polling !== null) return;
    this.#polling = this.#bot
      .start({ allowed_updates: ["callback_query"], timeout: this.#o.pollTimeoutSeconds ?? 30 })
      .catch(() => undefined)
      .finally(() => {
        this.#polling = null;
      });
  }

  async #onCallback(ctx: Context): Promise<void> {
    const query = ctx.callbackQuery;
    if (query?.data === undefined) return;
    if (String(query.message?.chat.id) !== String(this.#o.chatId)) {
      await ctx.answerCallbackQuery({ text: "this chat may not decide ACP consent requests", show_alert: true });
      return;
    }
    const parsed = parseCallbackData(query.data);
    const sent = parsed === null ? undefined : this.#sent.get(parsed.requestId);
    if (parsed === null || sent?.resolve === undefined || sent.messageId !== query.message?.message_id) {
      await ctx.answerCallbackQuery({ text: "this request is no longer waiting for an answer" });
      return;
    }
    const resolve = sent.resolve;
    delete sent.resolve;
    const approverId = `telegram:${query.from.id}`;
    const answer: HumanAnswer =
      parsed.button === "d"
        ? { decision: "denied", approverId }
        : { decision: "approved", scope: parsed.button === "s" ? "session" : "once", approverId };
    resolve(answer);
    await ctx.answerCallbackQuery({ text: parsed.button === "d" ? "denied" : "approved" });
  }
}

/**
 * The Telegram channel (grammY): sends each request with Approve / Approve for session / Deny buttons to one
 * chat, accepts button presses only from that chat, and edits the message when the request ends.
 */
export function createTelegramChannel(options: TelegramChannelOptions): ConsentChannel {
  return new TelegramChannel(options);
}
