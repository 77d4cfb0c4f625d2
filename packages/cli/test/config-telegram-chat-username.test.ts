import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configuredChannels } from "../src/wiring/config-channels.js";
import { tempRoot } from "./home-fixture.js";

const root = tempRoot("config-telegram-chat-username");
afterAll(root.cleanup);

function channelsOf(text: string, name: string): { lines: string[]; path: string } {
  const path = join(root.dir, name);
  writeFileSync(path, text);
  const lines: string[] = [];
  const seed = (): Promise<Uint8Array> => Promise.resolve(new Uint8Array(32).fill(3));
  configuredChannels(readConfigFile(path, true), seed, (l) => void lines.push(l));
  return { lines, path };
}

describe("telegram.chat_id given as @username", () => {
  it("is warned about when the config is read, naming the file and advising the numeric id", () => {
    const { lines, path } = channelsOf(
      "channel: telegram\ntelegram:\n  bot_token: 'encrypted:x'\n  chat_id: '@acp_approvals'\n",
      "username.yml",
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warning: `telegram\.chat_id` is `@acp_approvals`, a username: /);
    expect(lines[0]).toContain("numeric id");
    expect(lines[0]).toContain(path);
  });

  it("a numeric id (number or string) says nothing", () => {
    for (const id of ["-1001234567890", "'42'"]) {
      const { lines } = channelsOf(
        `channel: telegram\ntelegram:\n  bot_token: 'encrypted:x'\n  chat_id: ${id}\n`,
        "n.yml",
      );
      expect(lines).toEqual([]);
    }
  });
});
