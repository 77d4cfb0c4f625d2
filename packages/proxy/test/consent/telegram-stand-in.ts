/**
 * A local stand-in for the Telegram Bot API (`apiRoot`), enough for the consent channel: getMe, deleteWebhook,
 * sendMessage, editMessageText, answerCallbackQuery and long-polling getUpdates. It records every call and lets
 * a test inject callback_query updates.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { listen } from "./webhook-servers.js";

/** One Bot API call the stand-in received. */
export interface BotApiCall {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/** A sent message as the stand-in stores it. */
export interface SentMessage {
  readonly message_id: number;
  readonly chat_id: string;
  readonly text: string;
  readonly reply_markup: { inline_keyboard: { text: string; callback_data: string }[][] } | undefined;
}

export interface TelegramStandIn {
  readonly apiRoot: string;
  readonly calls: BotApiCall[];
  readonly messages: SentMessage[];
  /**
   * Queues a button press on `message_id` from `chatId` with `data`; `chatType` (default private) and
   * `chatUsername` describe the chat, `fromId` (default `chatId`) the person who pressed.
   */
  pressButton(options: {
    chatId: number;
    messageId: number;
    data: string;
    fromId?: number;
    chatType?: "private" | "group" | "supergroup" | "channel";
    chatUsername?: string;
  }): number;
  /** Holds every `sendMessage` answer (the message is stored at once) until the returned function is called. */
  holdSends(): () => void;
  /** The next calls of `method` fail with these Bot API errors, in order (`retry_after` for a 429). */
  failNext(method: string, ...errors: { error_code: number; description: string; retry_after?: number }[]): void;
  /** Calls of `method` are never answered from now on. */
  hang(method: string): void;
  /** The users `getChatMember` reports as administrators of `chatId` (everyone else is a `member`). */
  setAdmins(chatId: number, userIds: number[]): void;
  /** What `sendMessage` to `@username` answers as the chat (a channel or public group). */
  setChat(username: string, chat: { id: number; type: string }): void;
  close(): Promise<void>;
}

function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => {
      try {
        resolve(text === "" ? {} : (JSON.parse(text) as Record<string, unknown>));
      } catch {
        resolve({});
      }
    });
  });
}

/** Starts the stand-in on 127.0.0.1 for `token`. */
export async function startTelegramStandIn(token: string): Promise<TelegramStandIn> {
  const calls: BotApiCall[] = [];
  const messages: SentMessage[] = [];
  const updates: Record<string, unknown>[] = [];
  let nextUpdate = 1;
  let nextMessage = 100;
  let waiting: (() => void)[] = [];
  let held: Promise<void> | null = null;
  const failures = new Map<string, { error_code: number; description: string; retry_after?: number }[]>();
  const hanging = new Set<string>();
  const admins = new Map<number, number[]>();
  const chats = new Map<string, { id: number; type: string }>();
  const wake = (): void => {
    const all = waiting;
    waiting = [];
    for (const w of all) w();
  };
  const ok = (res: ServerResponse, result: unknown): void => {
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ ok: true, result }));
  };

  async function getUpdates(params: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const offset = typeof params["offset"] === "number" ? params["offset"] : 0;
    const ready = () => updates.filter((u) => (u["update_id"] as number) >= offset);
    const timeout = typeof params["timeout"] === "number" ? params["timeout"] : 0;
    if (ready().length === 0 && timeout > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(timeout, 1) * 1000);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
        res.on("close", resolve);
      });
    }
    if (!res.writableEnded && !res.destroyed) ok(res, ready());
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? "");
    const params = await body(req);
    if (match === null || match[1] !== token) {
      res.writeHead(401).end(JSON.stringify({ ok: false, error_code: 401, description: "Unauthorized" }));
      return;
    }
    const method = match[2] as string;
    calls.push({ method, params });
    if (hanging.has(method)) return;
    const failure = failures.get(method)?.shift();
    if (failure !== undefined) {
      const { retry_after, ...rest } = failure;
      const answer = { ok: false, ...rest, ...(retry_after !== undefined ? { parameters: { retry_after } } : {}) };
      res.writeHead(failure.error_code, { "Content-Type": "application/json" }).end(JSON.stringify(answer));
      return;
    }
    if (method === "getChatMember") {
      const isAdmin = admins.get(Number(params["chat_id"]))?.includes(Number(params["user_id"])) ?? false;
      return ok(res, { status: isAdmin ? "administrator" : "member", user: { id: params["user_id"] } });
    }
    if (method === "getMe") return ok(res, { id: 42, is_bot: true, first_name: "ACP", username: "acp_test_bot" });
    if (method === "deleteWebhook" || method === "answerCallbackQuery") return ok(res, true);
    if (method === "getUpdates") return getUpdates(params, res);
    if (method === "sendMessage") {
      const message = {
        message_id: nextMessage++,
        chat_id: String(params["chat_id"]),
        text: String(params["text"]),
        reply_markup: params["reply_markup"] as SentMessage["reply_markup"],
      };
      messages.push(message);
      if (held !== null) await held;
      return ok(res, {
        message_id: message.message_id,
        date: 0,
        chat: chats.get(String(params["chat_id"]).replace(/^@/, "")) ?? {
          id: Number(params["chat_id"]),
          type: "private",
        },
        text: message.text,
      });
    }
    if (method === "editMessageText" || method === "editMessageReplyMarkup") return ok(res, true);
    res.writeHead(404).end(JSON.stringify({ ok: false, error_code: 404, description: `unknown method ${method}` }));
  };

  const server = await listen((req, res) => void handle(req, res));
  return {
    apiRoot: server.url,
    calls,
    messages,
    pressButton: ({ chatId, messageId, data, fromId, chatType, chatUsername }) => {
      const update_id = nextUpdate++;
      const from = { id: fromId ?? chatId, is_bot: false, first_name: "Person" };
      const chat = {
        id: chatId,
        type: chatType ?? "private",
        ...(chatUsername !== undefined ? { username: chatUsername } : {}),
      };
      updates.push({
        update_id,
        callback_query: {
          id: `cbq-${update_id}`,
          from,
          chat_instance: "ci",
          data,
          message: { message_id: messageId, date: 0, chat, text: "…" },
        },
      });
      wake();
      return update_id;
    },
    holdSends: () => {
      let release = (): void => undefined;
      held = new Promise<void>((resolve) => (release = resolve));
      return () => {
        held = null;
        release();
      };
    },
    failNext: (method, ...errors) => failures.set(method, [...(failures.get(method) ?? []), ...errors]),
    hang: (method) => void hanging.add(method),
    setAdmins: (chatId, userIds) => void admins.set(chatId, userIds),
    setChat: (username, chat) => void chats.set(username, chat),
    close: async () => {
      wake();
      await server.close();
    },
  };
}
