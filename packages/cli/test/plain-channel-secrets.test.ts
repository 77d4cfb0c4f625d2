import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkChannelKeys, plainChannelSecrets } from "../src/wiring/config-channels.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { tempRoot } from "./home-fixture.js";

const root = tempRoot("plain-channel-secrets");
afterAll(root.cleanup);

let n = 0;
function config(text: string): ReturnType<typeof readConfigFile> {
  const path = join(root.dir, `config-${++n}.yml`);
  writeFileSync(path, text);
  return readConfigFile(path, true);
}

/** `acp doctor` leaves out of its config check the plain secrets the channel check refuses: these paths. */
describe("the chosen channel's plain secrets", () => {
  it("are the paths the channel check refuses as not sealed, of the chosen channel only", () => {
    const file = config(
      'version: "1"\nchannel: telegram\ntelegram:\n  bot_token: "123:plain"\n  chat_id: "42"\nwebhook:\n  secret: "whsec-plain-0123456789"\n',
    );
    expect(plainChannelSecrets(file)).toEqual(["telegram.bot_token"]);
    expect(() => checkChannelKeys(file)).toThrow(/`telegram\.bot_token` in config-\d+\.yml is not sealed/);
    const webhook = config(
      'version: "1"\nchannel: webhook\nwebhook:\n  url: "https://x.example/h"\n  secret: "plain"\n',
    );
    expect(plainChannelSecrets(webhook)).toEqual(["webhook.secret"]);
  });

  it("are none with no channel, the terminal, an unknown channel, or a section that is no mapping", () => {
    for (const text of [
      'version: "1"\n',
      'version: "1"\nchannel: prompt\ntelegram:\n  bot_token: "123:plain"\n',
      'version: "1"\nchannel: carrier-pigeon\ntelegram:\n  bot_token: "123:plain"\n',
      'version: "1"\nchannel: telegram\ntelegram: [1, 2]\n',
      'version: "1"\nchannel: telegram\ntelegram:\n  bot_token: 12345\n  chat_id: "42"\n',
    ])
      expect(plainChannelSecrets(config(text))).toEqual([]);
  });
});
