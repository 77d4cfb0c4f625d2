import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CliError } from "../src/exit-codes.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configInUse } from "../src/wiring/config-in-use.js";
import { configuredChannels } from "../src/wiring/config-channels.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const root = tempRoot("webhook-callback-wildcard");
afterAll(root.cleanup);
let n = 0;

function fileWith(text: string): string {
  const path = join(root.dir, `config-${++n}.yml`);
  writeFileSync(path, text);
  return path;
}

function webhookConfig(listen: string, callbackUrl?: string): string {
  return [
    'version: "1"',
    "channel: webhook",
    "webhook:",
    '  url: "https://approvals.example.com/acp"',
    '  secret: "encrypted:AAAA"',
    `  callback_listen: "${listen}"`,
    ...(callbackUrl !== undefined ? [`  callback_url: "${callbackUrl}"`] : []),
    "",
  ].join("\n");
}

function problems(path: string): { code: number; lines: string[] } {
  try {
    configInUse(readConfigFile(path, true));
  } catch (err) {
    if (err instanceof CliError) return { code: err.exitCode, lines: err.message.split("\n") };
    throw err;
  }
  return { code: 0, lines: [] };
}

describe("webhook.callback_listen on every address needs webhook.callback_url", () => {
  it.each([
    ["0.0.0.0:8787", "http://0.0.0.0:8787/acp/consent"],
    ["[::]:8787", "http://[::]:8787/acp/consent"],
    ["[0:0:0:0:0:0:0:0]:9000", "http://[0:0:0:0:0:0:0:0]:9000/acp/consent"],
    ["0.0.0.0:0", "http://0.0.0.0:0/acp/consent"],
  ])("`%s` without callback_url is refused at load (exit 4), naming the URL no receiver could reach", (listen, url) => {
    const path = fileWith(webhookConfig(listen));
    const got = problems(path);
    expect(got.code).toBe(4);
    expect(got.lines).toEqual([
      `${path}:6:20: \`webhook.callback_listen\` \`${listen}\` listens on every address, so the receiver cannot reach the default callback URL (\`${url}\`): set \`webhook.callback_url\` to the URL it reaches this machine at (e.g. https://acp.example.com/acp/consent)`,
    ]);
  });

  it("is refused whichever channel is chosen (the section is checked either way)", () => {
    const path = fileWith(webhookConfig("0.0.0.0:8787").replace("channel: webhook", "channel: prompt"));
    expect(problems(path).lines.some((l) => l.includes("listens on every address"))).toBe(true);
  });

  it("loads with a callback_url, and a listener on one address needs none", () => {
    for (const text of [
      webhookConfig("0.0.0.0:8787", "https://acp.example.com/acp/consent"),
      webhookConfig("[::]:8787", "https://acp.example.com/acp/consent"),
      webhookConfig("127.0.0.1:0"),
      webhookConfig("[::1]:8787"),
      webhookConfig("192.0.2.10:8787"),
      webhookConfig("acp.internal:8787"),
    ]) {
      const path = fileWith(text);
      expect(problems(path), text).toEqual({ code: 0, lines: [] });
    }
  });

  it("the channel refuses to open with it too, before the home's key is asked for", async () => {
    const path = fileWith(webhookConfig("0.0.0.0:8787"));
    const logged: string[] = [];
    let seedAsked = false;
    const seed = (): Promise<Uint8Array> => {
      seedAsked = true;
      return Promise.reject(new Error("no key here"));
    };
    const [channel] = configuredChannels(readConfigFile(path, true), seed, (line) => logged.push(line));
    expect(channel?.name).toBe("webhook");
    expect(await channel?.isAvailable()).toBe(false);
    expect(seedAsked).toBe(false);
    expect(logged.some((l) => l.includes("listens on every address") && l.includes("webhook.callback_url"))).toBe(true);
    await channel?.close?.();
  });

  it("acp doctor fails its channel check on it", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "config.yml"), webhookConfig("0.0.0.0:8787"));
    const out = await runCli(["doctor", "--json"], { env: envFor(home) });
    expect(out.code).toBe(1);
    const checks = (JSON.parse(out.stdout) as { checks: { status: string; name: string; detail: string }[] }).checks;
    const channel = checks.filter((c) => c.name === "channel" && c.status === "fail").map((c) => c.detail);
    expect(channel).toHaveLength(1);
    expect(channel[0]).toContain("listens on every address");
  });
});
