/** The Telegram consent channel (grammY, long polling). */
export { createTelegramChannel, type TelegramChannelOptions } from "./telegram-channel.js";
export { formatTelegramMessage, parseCallbackData, callbackDataOf, type TelegramButton } from "./message.js";
