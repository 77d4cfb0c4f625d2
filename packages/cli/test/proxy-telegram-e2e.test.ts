import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runCli } from "./run.js";
import { configureTelegram, envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { startTelegramStandIn, type TelegramStandIn } from "../../proxy/test/consent/telegram-stand-in.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const TOKEN = "123456:TEST-token-for-the-stand-in";
const CHAT = 4242;

async function waitForMessage(
  bot: TelegramStandIn,
  count: number,
): Promise<{ message_id: number; text: string; data: string }> {
  for (let i = 0; i < 400; i++) {
    const message = bot.messages[count];
    const approve = message?.reply_markup?.inline_keyboard.flat().find((b) => b.text.includes("Approve"));
    if (message !== undefined && approve !== undefined)
      return { message_id: message.message_id, text: message.text, data: approve.callback_data };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no consent message reached the Telegram stand-in");
}

describe("acp proxy with `channel: telegram` in config.yml (a local stand-in Bot API)", () => {
  const root = tempRoot("proxy-telegram");
  let bot: TelegramStandIn;
  let home = "";
  let client: Client;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, "packages/cli/dist/wiring/config-channels.js"))) {
      await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    }
    bot = await startTelegramStandIn(TOKEN);
    ({ home } = fixtureHome(root.dir));
    const env = envFor(home);
    await configureTelegram(home, { token: TOKEN, chatId: CHAT, apiRoot: bot.apiRoot });
    expect(readFileSync(join(home, "config.yml"), "utf8")).not.toContain(TOKEN);
    writeFileSync(
      join(home, "policy.yml"),
      'version: "1"\ndefault_action: deny\nrules:\n  - id: echo-asks\n    match: { tool: echo }\n    action: ask\n    timeout: 60\n',
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    client = new Client({ name: "telegram-agent", version: "1.0.0" });
    await client.connect(transport);
  }, 120_000);

  afterAll(async () => {
    await client.close();
    await bot.close();
    root.cleanup();
  });

  it("puts the request before the configured chat; a press from another chat decides nothing; the owner's approval forwards", async () => {
    const call = client.callTool({ name: "echo", arguments: { message: "via telegram" } }, undefined, {
      timeout: 60_000,
    });
    const message = await waitForMessage(bot, 0);
    expect(message.text).toContain("echo");
    bot.pressButton({ chatId: 999, messageId: message.message_id, data: message.data });
    bot.pressButton({ chatId: CHAT, messageId: message.message_id, data: message.data });
    const result = await call;
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.content)).toContain("via telegram");
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain(`"approver":{"channel":"telegram","id":"telegram:${CHAT}"}`);
    expect(audit).not.toContain("telegram:999");
    // the message, edited once the request ended, says who decided and how
    const edited = bot.calls.filter(
      (c) => c.method === "editMessageText" && c.params["message_id"] === message.message_id,
    );
    expect(edited.map((c) => String(c.params["text"]).split("\n").at(-1))).toEqual([
      `✅ approved by Person (${CHAT}) via telegram`,
    ]);
  });

  it("a press on another proxy's request is recorded as a Telegram answer (not `cli`); an answer from acp approve is named in the edited message", async () => {
    // proxy A of the same home has no Telegram channel of its own (another config file): only this proxy's
    // bot polls, so the press on A's request reaches this proxy, which records it in state.db for A
    const other = join(root.dir, "no-channel.yml");
    writeFileSync(other, 'version: "1"\n');
    const env = envFor(home);
    const a = new Client({ name: "other-agent", version: "1.0.0" });
    await a.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [ACP, "proxy", "--config", other, "--upstream", EVERYTHING, "--name", "everything"],
        env: { PATH: process.env["PATH"] ?? "", ...env },
        stderr: "pipe",
      }),
    );
    try {
      const sent = bot.messages.length;
      const ours = client.callTool({ name: "echo", arguments: { message: "b's own" } }, undefined, { timeout: 60_000 });
      const own = await waitForMessage(bot, sent); // this proxy sent its own request: its bot is polling
      const theirs = a.callTool({ name: "echo", arguments: { message: "a's" } }, undefined, { timeout: 60_000 });
      // bounded: a proxy A that never raises its request fails the test instead of polling forever
      const id = await vi.waitFor(
        async () => {
          const listed = JSON.parse((await runCli(["pending", "--json"], { env })).stdout || "[]") as {
            id: string;
            arguments: { message?: string };
          }[];
          const found = listed.find((r) => r.arguments.message === "a's")?.id;
          if (found === undefined) throw new Error("proxy A's request is not pending yet");
          return found;
        },
        { timeout: 60_000, interval: 100 },
      );
      bot.pressButton({ chatId: CHAT, messageId: 9_999, data: `acp:a:${id}` });
      const result = await theirs;
      expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
      const approval = readFileSync(join(home, "audit.jsonl"), "utf8")
        .trim()
        .split("\n")
        .find((line) => line.includes('"event_type":"consent_approved"') && line.includes(id));
      expect(approval).toContain(`"approver":{"channel":"telegram","id":"telegram:${CHAT}"}`);

      const ownId = /cr_[0-9a-f]{32}/.exec(own.text)?.[0] ?? "";
      expect((await runCli(["approve", ownId], { env, now: new Date() })).code).toBe(0);
      expect((await ours).isError).not.toBe(true);
      const edited = bot.calls.filter(
        (c) => c.method === "editMessageText" && c.params["message_id"] === own.message_id,
      );
      expect(String(edited.at(-1)?.params["text"]).split("\n").at(-1)).toMatch(/^✅ approved by \S+ via cli$/);
    } finally {
      await a.close();
    }
  }, 120_000);
});
