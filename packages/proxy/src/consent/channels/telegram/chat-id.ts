/**
 * What `telegram.chat_id` names. A numeric id is one chat for good; an `@username` is whichever public
 * channel or group holds that name when a button is pressed, and a name can be given up and taken by someone
 * else, whose channel (with the bot added as administrator, which any channel owner can do) would then receive
 * the consent requests and decide them.
 */

/** Whether a configured chat id names its chat by `@username` rather than by its numeric id. */
export function isTelegramChatUsername(chatId: string | number): boolean {
  return typeof chatId === "string" && chatId.trim().startsWith("@");
}

/**
 * The warning for a `chat_id` given as `@username` (said once when the config is read), or null for a
 * numeric id.
 */
export function telegramChatIdWarning(chatId: string | number): string | null {
  if (!isTelegramChatUsername(chatId)) return null;
  const name = String(chatId).trim();
  return (
    `\`telegram.chat_id\` is \`${name}\`, a username: if the name is given up, whoever takes it next can add this ` +
    `bot to their channel as administrator, receive the consent requests and decide them; set the chat's numeric ` +
    `id instead (the \`id\` of https://api.telegram.org/bot<token>/getChat?chat_id=${name})`
  );
}
