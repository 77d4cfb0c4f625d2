/** The Telegram consent channel (grammY, long polling; grammY is imported when a channel is created). */
export { createTelegramChannel } from "./lazy-channel.js";
export type { TelegramChannelOptions } from "./telegram-channel.js";
export { formatTelegramMessage, parseCallbackData, callbackDataOf, type TelegramButton } from "./message.js";
export { isTelegramChatUsername, telegramChatIdWarning } from "./chat-id.js";
