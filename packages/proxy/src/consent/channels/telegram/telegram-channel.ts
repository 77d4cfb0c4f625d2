import { Bot, GrammyError, HttpError, type Context } from "grammy";
import { abortError, realTimers, sleep, type ConsentTimers } from "../../timers.js";
import type {
  ChannelDelivery,
  ChannelSettlement,
  ConsentChannel,
  ConsentRequestV02,
  HumanAnswer,
  SettledBy,
} from "../../types.js";
import {
  type SettledByText,
  formatSettledMessage,
  formatTelegramMessage,
  keyboardOf,
  parseCallbackData,
  settledLine,
} from "./message.js";

/** What the Telegram channel needs. */
export interface TelegramChannelOptions {
  readonly token: string;
  /** The only chat whose buttons may decide. */
  readonly chatId: string | number;
  /** The Bot API root (no trailing slash). Default `https://api.telegram.org`; tests point it at a stand-in. */
  readonly apiRoot?: string;
  /** Long-polling timeout in seconds. Default 30. */
  readonly pollTimeoutSeconds?: number;
  readonly timers?: ConsentTimers;
  /** When a press came in, reported as when the person answered (`HumanAnswer.answeredAtMs`). Default: the system clock. */
  readonly clock?: () => Date;
  /** How long one Bot API call (not the long poll) may take before it is retried. Default 10 s. */
  readonly callTimeoutMs?: number;
  /** Attempts of a `sendMessage` or an edit: 429 (after its `retry_after`), 5xx, network errors, timeouts. Default 4. */
  readonly maxAttempts?: number;
  /** How long editing the message may take once the request ended (the agent's call waits for it). Default 5 s. */
  readonly settleTimeoutMs?: number;
  /**
   * A press (from someone who may decide) on a request this channel does not hold: another process sent it —
   * several proxies of one home share the bot, and Telegram hands each press to whichever of them polls — or
   * this process restarted. Record it where the request's own proxy reads answers (`acp proxy` records it in the
   * home's pending table, as `acp approve` does); true when recorded. Without it, or when it returns false, the
   * press is refused and the message left as it is.
   */
  readonly forward?: (requestId: string, answer: HumanAnswer) => boolean | Promise<boolean>;
}

/**
 * No link preview: Telegram's servers would fetch the first URL in the arguments to preview it — a GET the agent
 * chose, sent before anyone approved anything (and a way to carry data out).
 */
const NO_PREVIEW = { is_disabled: true } as const;

/** The statuses of a chat member who may decide in a group or channel. */
const DECIDERS = new Set(["creator", "administrator"]);

interface Sent {
  readonly nonce: string;
  readonly messageId: number;
  readonly text: string;
  resolve?: (answer: HumanAnswer) => void;
  /** Answers the press that gave this request's answer, once: told how the request ended (see `settle`). */
  acknowledge?: (text?: string) => Promise<void>;
}

class TelegramChannel implements ConsentChannel {
  readonly name = "telegram";
  readonly #o: TelegramChannelOptions;
  readonly #bot: Bot;
  readonly #sent = new Map<string, Sent>();
  /** The message of each request that ended here (most recent 1024). */
  readonly #ended = new Map<string, number>();
  /**
   * Requests whose message is still being sent, with how they ended if they ended meanwhile (a request withdrawn
   * or expired before Telegram answered `sendMessage`): the message is edited as soon as its id is known, so no
   * live buttons stay behind.
   */
  readonly #sending = new Map<string, { outcome?: ChannelSettlement; by?: SettledBy; reason?: string }>();
  /** The names Telegram gave for the people whose presses this channel took (`telegram:<id>` → name; last 256). */
  readonly #names = new Map<string, string>();
  /** Presses whose answer was taken and that are not yet answered (answered blank at close). */
  readonly #unacknowledged = new Set<(text?: string) => Promise<void>>();
  #polling: Promise<void> | null = null;
  #pollRetry: unknown;
  #closed = false;

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
    const sending: { outcome?: ChannelSettlement; by?: SettledBy; reason?: string } = {};
    this.#sending.set(request.id, sending);
    let message: Awaited<ReturnType<Bot["api"]["sendMessage"]>>;
    try {
      message = await this.#call(
        "sendMessage",
        (sig) =>
          this.#bot.api.sendMessage(
            this.#o.chatId,
            text,
            { reply_markup: keyboardOf(request.id), link_preview_options: NO_PREVIEW },
            grammySignal(sig),
          ),
        signal,
        // a message being sent when the request ends is let through, then edited (below): no live buttons left
        false,
      );
    } finally {
      this.#sending.delete(request.id);
    }
    const sent: Sent = { nonce: request.nonce, messageId: message.message_id, text };
    if (sending.outcome !== undefined) {
      this.#remember(request.id, sent.messageId);
      await this.#edit(sent, sending.outcome, sending.by, sending.reason);
      throw abortError(signal);
    }
    this.#sent.set(request.id, sent);
    this.#startPolling();
    return new Promise<HumanAnswer>((resolve, reject) => {
      // once the request is over (expired, withdrawn, answered elsewhere) a press is no answer: until the
      // message is edited, the presser is told so rather than "approved"
      const onAbort = (): void => {
        delete sent.resolve;
        reject(abortError(signal));
      };
      sent.resolve = (answer) => {
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  async settle(request: ConsentRequestV02, outcome: ChannelSettlement, by?: SettledBy, reason?: string): Promise<void> {
    const sending = this.#sending.get(request.id);
    if (sending !== undefined) {
      sending.outcome = outcome;
      if (by !== undefined) sending.by = by;
      if (reason !== undefined) sending.reason = reason;
      return;
    }
    const sent = this.#sent.get(request.id);
    if (sent === undefined) return;
    this.#sent.delete(request.id);
    this.#remember(request.id, sent.messageId);
    await this.#edit(sent, outcome, by, reason);
    // the press that answered hears how the request ended only now, after the message says it
    await sent.acknowledge?.(settledLine(outcome, this.#byText(by), reason));
  }

  /**
   * The acknowledgement of a press whose answer was taken. It waits for the request's end (`settle`) and says
   * it, so the person never sees "approved" for an answer then not used (another answer recorded first, a
   * response that failed verification or could not be recorded); without a `settle` within
   * {@link ACKNOWLEDGE_WITHIN_MS} the press is answered blank (Telegram's button spins until it is answered).
   */
  #acknowledger(ctx: Context): (text?: string) => Promise<void> {
    let done = false;
    const acknowledge = async (text?: string): Promise<void> => {
      if (done) return;
      done = true;
      this.#timers.clearTimeout(timer);
      this.#unacknowledged.delete(acknowledge);
      await ctx.answerCallbackQuery(text === undefined ? {} : { text }).catch(() => undefined);
    };
    // (set before `acknowledge` can run: only the timer or a later `settle` or `close` calls it)
    const timer = this.#timers.setTimeout(() => void acknowledge(), ACKNOWLEDGE_WITHIN_MS);
    this.#unacknowledged.add(acknowledge);
    return acknowledge;
  }

  /** Who answered, for the edited message: a Telegram name this channel saw, else the id without its prefix. */
  #byText(by: SettledBy | undefined): SettledByText | undefined {
    if (by === undefined) return undefined;
    const prefix = `${by.channel}:`;
    const bare = by.approverId.startsWith(prefix) ? by.approverId.slice(prefix.length) : by.approverId;
    const name = by.channel === "telegram" ? this.#names.get(by.approverId) : undefined;
    return { who: name === undefined ? bare : `${name} (${bare})`, channel: by.channel };
  }

  /** Remembers the message of a request that ended here (the last 1024), to clear its buttons if pressed. */
  #remember(requestId: string, messageId: number): void {
    this.#ended.set(requestId, messageId);
    if (this.#ended.size > 1024) this.#ended.delete(this.#ended.keys().next().value as string);
  }

  /** Edits the message to say how the request ended and removes the buttons; gives up after `settleTimeoutMs`. */
  async #edit(sent: Sent, outcome: ChannelSettlement, by?: SettledBy, reason?: string): Promise<void> {
    const limit = new AbortController();
    const timer = this.#timers.setTimeout(() => limit.abort("settle timeout"), this.#o.settleTimeoutMs ?? 5_000);
    try {
      const text = formatSettledMessage(sent.text, outcome, this.#byText(by), reason);
      const markup = { reply_markup: { inline_keyboard: [] }, link_preview_options: NO_PREVIEW };
      await this.#call(
        "editMessageText",
        (sig) => this.#bot.api.editMessageText(this.#o.chatId, sent.messageId, text, markup, grammySignal(sig)),
        limit.signal,
      );
    } catch {
      // the outcome stands whether or not the message could be edited
    } finally {
      this.#timers.clearTimeout(timer);
    }
  }

  get #timers(): ConsentTimers {
    return this.#o.timers ?? realTimers;
  }

  /**
   * One Bot API call, each attempt limited to `callTimeoutMs`, retried on 429 (after its `retry_after`), 5xx,
   * network errors and timeouts with backoff, at most `maxAttempts` times; stops retrying when `signal` aborts
   * (and aborts the attempt in flight too unless `abortInFlight` is false). Rejects with an error that never carries
   * the bot token (grammY's keeps the request URL, token included).
   */
  async #call<T>(
    method: string,
    fn: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
    abortInFlight = true,
  ): Promise<T> {
    const attempts = this.#o.maxAttempts ?? 4;
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) throw abortError(signal);
      const control = new AbortController();
      const onAbort = (): void => {
        if (abortInFlight) control.abort(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      const timer = this.#timers.setTimeout(() => control.abort("timeout"), this.#o.callTimeoutMs ?? 10_000);
      let wait: number | null;
      let failure: Error;
      try {
        return await fn(control.signal);
      } catch (error) {
        if (signal.aborted) throw abortError(signal);
        wait = retryDelay(error, attempt);
        failure = this.#safeError(method, error, control.signal.aborted);
      } finally {
        this.#timers.clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      }
      if (wait === null || attempt >= attempts) throw failure;
      await sleep(wait, signal, this.#timers);
    }
  }

  #safeError(method: string, error: unknown, timedOut: boolean): Error {
    const message = timedOut
      ? `the Bot API did not answer ${method} within ${this.#o.callTimeoutMs ?? 10_000} ms`
      : error instanceof Error
        ? error.message
        : String(error);
    return new Error(`telegram: ${message.split(this.#o.token).join("[bot token]")}`);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#timers.clearTimeout(this.#pollRetry);
    // presses still waiting for their request's end are answered blank, not waited for (a Bot API that is gone
    // must not hold the close)
    for (const acknowledge of [...this.#unacknowledged]) void acknowledge();
    // stop() confirms the last update with one more getUpdates: a Bot API that is gone must not fail the close
    if (this.#bot.isRunning()) await this.#bot.stop().catch(() => undefined);
    await this.#polling;
  }

  #startPolling(): void {
    if (this.#polling !== null || this.#closed) return;
    this.#polling = this.#bot
      .start({ allowed_updates: ["callback_query"], timeout: this.#o.pollTimeoutSeconds ?? 30 })
      .then(
        () => false,
        () => true,
      )
      .then((failed) => {
        this.#polling = null;
        // grammY stops for good on 401 and 409 (another process polls this bot) and when its setup fails: while
        // requests wait for a press, try again later rather than leave their buttons dead
        if (failed && !this.#closed && this.#sent.size > 0) {
          this.#pollRetry = this.#timers.setTimeout(() => this.#startPolling(), POLL_RETRY_MS);
        }
      });
  }

  /** Whether the chat a button was pressed in is the configured one (`chat_id`, or `@username`). */
  #isConfiguredChat(chat: { id: number; username?: string | undefined } | undefined): boolean {
    if (chat === undefined) return false;
    const configured = String(this.#o.chatId);
    if (configured.startsWith("@")) return chat.username?.toLowerCase() === configured.slice(1).toLowerCase();
    return String(chat.id) === configured;
  }

  /** In a private chat its person decides; in a group or channel only its administrators. */
  async #mayDecide(chat: { id: number; type: string }, userId: number): Promise<boolean> {
    if (chat.type === "private") return chat.id === userId;
    try {
      const member = await this.#call(
        "getChatMember",
        (sig) => this.#bot.api.getChatMember(chat.id, userId, grammySignal(sig)),
        new AbortController().signal,
      );
      return DECIDERS.has(member.status);
    } catch {
      return false;
    }
  }

  async #onCallback(ctx: Context): Promise<void> {
    const query = ctx.callbackQuery;
    if (query?.data === undefined) return;
    // answered when the press came in (Telegram's update says nothing of it), before any Bot API call below
    const answeredAtMs = (this.#o.clock ?? (() => new Date()))().getTime();
    const chat = query.message?.chat;
    const messageId = query.message?.message_id;
    if (chat === undefined || messageId === undefined || !this.#isConfiguredChat(chat)) {
      await ctx.answerCallbackQuery({ text: "this chat may not decide ACP consent requests", show_alert: true });
      return;
    }
    const parsed = parseCallbackData(query.data);
    const notWaiting = (): Promise<unknown> =>
      ctx.answerCallbackQuery({ text: "this request is no longer waiting for an answer" });
    if (parsed === null) return void (await notWaiting());
    const sent = this.#sent.get(parsed.requestId);
    // held here, but answered already, or a press on another message than the one this request was sent as
    if (sent !== undefined && (sent.resolve === undefined || sent.messageId !== messageId)) {
      return void (await notWaiting());
    }
    if (!(await this.#mayDecide(chat, query.from.id))) {
      await ctx.answerCallbackQuery({
        text: "only this chat's administrators may decide ACP consent requests",
        show_alert: true,
      });
      return;
    }
    const approverId = `telegram:${query.from.id}`;
    const name = query.from.username !== undefined ? `@${query.from.username}` : query.from.first_name;
    if (name !== "") {
      this.#names.delete(approverId);
      this.#names.set(approverId, name);
      if (this.#names.size > 256) this.#names.delete(this.#names.keys().next().value as string);
    }
    const answer: HumanAnswer =
      parsed.button === "d"
        ? { decision: "denied", approverId }
        : { decision: "approved", scope: parsed.button === "s" ? "session" : "once", approverId };
    const said = parsed.button === "d" ? "deny" : "approve";
    if (sent === undefined) {
      // a request this process sent and that ended here (its closing edit failed, so the buttons stayed): they
      // would only ever be refused, so remove them
      if (this.#ended.get(parsed.requestId) === messageId) {
        await notWaiting();
        const none = { reply_markup: { inline_keyboard: [] } };
        await this.#bot.api.editMessageReplyMarkup(chat.id, messageId, none).catch(() => undefined);
        return;
      }
      // not a request of this process: another proxy of the home sent it (one bot, several proxies take turns
      // receiving presses). Hand it to where its proxy reads answers. When that refuses, the message stays as
      // it is: it may belong to a process this one knows nothing of (another home using the same bot)
      let forwarded = false;
      try {
        forwarded = (await this.#o.forward?.(parsed.requestId, { ...answer, channel: "telegram" })) === true;
      } catch {
        forwarded = false;
      }
      // recorded, not yet used: its proxy may still refuse it (another answer recorded first), and edits the message
      if (forwarded) {
        const text = `your ${said} is recorded: the message will say how the request ended`;
        return void (await ctx.answerCallbackQuery({ text }));
      }
      return void (await notWaiting());
    }
    // the request may have ended while the membership was checked
    const resolve = sent.resolve;
    if (resolve === undefined || this.#sent.get(parsed.requestId) !== sent) return void (await notWaiting());
    delete sent.resolve;
    // not "approved" now: the answer may yet not be used, and the message is edited to how it ended first
    sent.acknowledge = this.#acknowledger(ctx);
    resolve({ ...answer, answeredAtMs });
  }
}

/** The wait before a retry of a Bot API call: 429 → its `retry_after`; 5xx, network, timeout → backoff; else null. */
function retryDelay(error: unknown, attempt: number): number | null {
  const backoff = 500 * 2 ** (attempt - 1);
  if (error instanceof GrammyError) {
    if (error.error_code === 429) {
      const after = error.parameters.retry_after;
      return typeof after === "number" && after >= 0 ? after * 1000 : backoff;
    }
    return error.error_code >= 500 ? backoff : null;
  }
  return error instanceof HttpError ? backoff : null;
}

/** grammY types its signals with its AbortController shim; at run time it takes Node's own. */
type GrammySignal = Parameters<Bot["api"]["sendMessage"]>[3];
const grammySignal = (signal: AbortSignal): GrammySignal => signal as unknown as GrammySignal;

/** How long a press whose answer was taken waits for the request's end before it is answered blank. */
const ACKNOWLEDGE_WITHIN_MS = 10_000;

/** How long to wait before polling again after grammY stopped polling on an error. */
const POLL_RETRY_MS = 5_000;

/**
 * The Telegram channel (grammY): sends each request with Approve / Approve for session / Deny buttons to one
 * chat, accepts button presses only from that chat, and edits the message when the request ends.
 */
export function createTelegramChannel(options: TelegramChannelOptions): ConsentChannel {
  return new TelegramChannel(options);
}
