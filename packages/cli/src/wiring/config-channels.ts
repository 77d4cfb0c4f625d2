import { existsSync } from "node:fs";
import { join } from "node:path";
import { readConfigDocument, readConfigSecret } from "@acp/store";
import { createTelegramChannel, type ConsentChannel } from "@acp/proxy";

/**
 * A channel opened on first use: its secret needs the home's key, which is unlocked only when a person
 * is first asked. A channel that cannot open says so (once) and counts as unavailable.
 */
function lazyChannel(name: string, open: () => Promise<ConsentChannel>, log: (line: string) => void): ConsentChannel {
  let channel: Promise<ConsentChannel | null> | undefined;
  const get = (): Promise<ConsentChannel | null> =>
    (channel ??= open().catch((err: unknown) => {
      log(`the ${name} consent channel is unavailable: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    }));
  return {
    name,
    async isAvailable() {
      const c = await get();
      return c !== null && (await c.isAvailable());
    },
    async deliver(delivery) {
      const c = await get();
      if (c === null) throw new Error(`the ${name} channel is unavailable`);
      return c.deliver(delivery);
    },
    async settle(request, outcome) {
      const c = await get();
      await c?.settle?.(request, outcome);
    },
    async close() {
      if (channel === undefined) return;
      const c = await channel;
      await c?.close?.();
    },
  };
}

/**
 * The consent channels `config.yml` names (§8.1 `channel:`): `telegram` reads `telegram.bot_token`
 * (sealed with `acp config set-secret`), `telegram.chat_id` and optionally `telegram.api_root` (a
 * self-hosted Bot API). `prompt` needs nothing here (the terminal is always offered). `webhook` is not
 * wired into the proxy yet and is reported as such.
 */
export function configuredChannels(
  home: string,
  seed: () => Promise<Uint8Array>,
  log: (line: string) => void,
): ConsentChannel[] {
  if (!existsSync(join(home, "config.yml"))) return [];
  const doc = readConfigDocument(home);
  if (!doc.ok) return [];
  const channel: unknown = doc.value.get("channel");
  if (channel === "webhook") {
    log("channel: webhook is not wired into acp proxy yet; consent goes to the terminal and `acp approve`");
    return [];
  }
  if (channel !== "telegram") return [];
  const chatId: unknown = doc.value.getIn(["telegram", "chat_id"]);
  const apiRoot: unknown = doc.value.getIn(["telegram", "api_root"]);
  const open = async (): Promise<ConsentChannel> => {
    if ((typeof chatId !== "string" && typeof chatId !== "number") || String(chatId) === "") {
      throw new Error("`telegram.chat_id` is not set in config.yml");
    }
    const token = readConfigSecret(doc.value, "telegram.bot_token", await seed());
    if (!token.ok) throw new Error(token.issues[0]?.message ?? "cannot open `telegram.bot_token`");
    if (token.value === undefined)
      throw new Error("`telegram.bot_token` is not set (acp config set-secret telegram.bot_token)");
    return createTelegramChannel({
      token: token.value,
      chatId,
      ...(typeof apiRoot === "string" && apiRoot !== "" ? { apiRoot } : {}),
    });
  };
  return [lazyChannel("telegram", open, log)];
}
