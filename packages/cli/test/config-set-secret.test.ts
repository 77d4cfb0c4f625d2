import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { homePaths, loadMasterSeed, readConfigDocument, readConfigSecret } from "@acp/store";
import { runCli } from "./run.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "./home-fixture.js";

const root = tempRoot("config-secret");
afterAll(root.cleanup);

describe("acp config set-secret", () => {
  it("seals the value from stdin into config.yml as encrypted:<base64>, keeping every comment", async () => {
    const { home } = fixtureHome(root.dir);
    const before = readFileSync(homePaths(home).config, "utf8");
    const r = await runCli(["config", "set-secret", "telegram.bot_token"], { env: envFor(home), stdin: "123:ABC\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("sealed `telegram.bot_token` in config.yml\n");
    const after = readFileSync(homePaths(home).config, "utf8");
    expect(after).toMatch(/^ {2}bot_token: "encrypted:[A-Za-z0-9+/]+=*"$/m);
    const comments = (t: string): string[] => t.split("\n").filter((l) => l.trim().startsWith("#"));
    expect(comments(after)).toEqual(comments(before));
    expect(after.replace(/bot_token: .*$/m, 'bot_token: ""')).toBe(before);
    const doc = readConfigDocument(home);
    const seed = loadMasterSeed(home, PASSPHRASE);
    if (!doc.ok || !seed.ok) throw new Error("home");
    expect(readConfigSecret(doc.value, "telegram.bot_token", seed.value)).toEqual({ ok: true, value: "123:ABC" });
  });

  it("refuses a value in argv, a bad path and an empty value", async () => {
    const { home } = fixtureHome(root.dir);
    const argv = await runCli(["config", "set-secret", "webhook.secret", "hunter2"], { env: envFor(home) });
    expect(argv.code).toBe(2);
    expect(argv.stderr).not.toContain("hunter2");
    expect((await runCli(["config", "set-secret", "Telegram..x"], { env: envFor(home), stdin: "v" })).code).toBe(2);
    expect((await runCli(["config", "set-secret", "webhook.secret"], { env: envFor(home), stdin: "\n" })).code).toBe(2);
  });

  it("takes only the keys that hold secrets: anything else is refused (exit 2, the accepted keys named), nothing written", async () => {
    const { home } = fixtureHome(root.dir);
    const before = readFileSync(homePaths(home).config, "utf8");
    for (const path of [
      "version",
      "version.x",
      "bogus.key",
      "channel",
      "telegram.chat_id",
      "webhook.url",
      "serve.port",
      "proxy.agent_tokens",
      "proxy.agent_tokens.CI_Bot",
      "proxy.agent_tokens.ci_bot.x",
      "serve.approver_tokens.9lives",
      `serve.agent_tokens.${"a".repeat(65)}`,
      "storage.url",
    ]) {
      const r = await runCli(["config", "set-secret", path], { env: envFor(home), stdin: "0123456789abcdef0123\n" });
      expect(r.code, path).toBe(2);
      expect(r.stderr, path).toContain("is not a key that holds a secret");
      expect(r.stderr, path).toContain("telegram.bot_token, webhook.secret, serve.bearer_token");
      expect(r.stderr, path).toContain("proxy.agent_tokens.NAME");
      expect(r.stderr, path).not.toContain("0123456789abcdef0123");
    }
    expect(readFileSync(homePaths(home).config, "utf8")).toBe(before);
    // a typo of a secret key is answered with the key it most likely meant, and still writes nothing
    for (const [typo, meant] of [
      ["telegram.bot_tokn", "telegram.bot_token"],
      ["webhok.secret", "webhook.secret"],
      ["proxy.agent_token.ci_bot", "proxy.agent_tokens.ci_bot"],
    ] as const) {
      const r = await runCli(["config", "set-secret", typo], { env: envFor(home), stdin: "0123456789abcdef0123\n" });
      expect(r.code, typo).toBe(2);
      expect(r.stderr, typo).toContain(`\`${typo}\` is not a key that holds a secret (did you mean \`${meant}\`?)`);
    }
    expect(readFileSync(homePaths(home).config, "utf8")).toBe(before);
    // every accepted key is written
    for (const path of [
      "telegram.bot_token",
      "webhook.secret",
      "serve.bearer_token",
      "serve.approver_token",
      "proxy.bearer_token",
      "serve.agent_tokens.ci_bot",
      "serve.approver_tokens.pager",
      "proxy.agent_tokens._nightly2",
    ]) {
      const r = await runCli(["config", "set-secret", path], {
        env: envFor(home),
        stdin: `${path.replace(/[^a-z0-9]/g, "")}-0123456789abcdef\n`,
      });
      expect(r.code, path).toBe(0);
    }
    const doc = readConfigDocument(home);
    const seed = loadMasterSeed(home, PASSPHRASE);
    if (!doc.ok || !seed.ok) throw new Error("home");
    expect(readConfigSecret(doc.value, "serve.approver_tokens.pager", seed.value)).toEqual({
      ok: true,
      value: "serveapprovertokenspager-0123456789abcdef",
    });
    expect(doc.value.get("version")).toBe("1");
  });

  it("refuses a trusted-channel key shorter than an HMAC key needs, and a key id acp serve would refuse", async () => {
    const { home } = fixtureHome(root.dir);
    const before = readFileSync(homePaths(home).config, "utf8");
    const short = await runCli(["config", "set-secret", "serve.trusted_channel_keys.ops"], {
      env: envFor(home),
      stdin: "short-key\n",
    });
    expect(short.code).toBe(4);
    expect(short.stderr).toMatch(/`serve.trusted_channel_keys.ops` is too short \(9 characters\)/);
    expect(short.stderr).not.toContain("short-key");
    const badId = await runCli(["config", "set-secret", "serve.trusted_channel_keys.Ops-Key"], {
      env: envFor(home),
      stdin: "0123456789abcdef0123456789abcdef\n",
    });
    expect(badId.code).toBe(2);
    expect(readFileSync(homePaths(home).config, "utf8")).toBe(before);
    const key = "0123456789abcdef0123456789abcdef";
    const sealed = await runCli(["config", "set-secret", "serve.trusted_channel_keys.ops"], {
      env: envFor(home),
      stdin: `${key}\n`,
    });
    expect(sealed.code).toBe(0);
    const doc = readConfigDocument(home);
    const seed = loadMasterSeed(home, PASSPHRASE);
    if (!doc.ok || !seed.ok) throw new Error("home");
    expect(readConfigSecret(doc.value, "serve.trusted_channel_keys.ops", seed.value)).toEqual({ ok: true, value: key });
  });

  it("refuses a bearer token acp serve would refuse, and writes nothing", async () => {
    const { home } = fixtureHome(root.dir);
    const before = readFileSync(homePaths(home).config, "utf8");
    const short = await runCli(["config", "set-secret", "serve.bearer_token"], { env: envFor(home), stdin: "pw123\n" });
    expect(short.code).toBe(4);
    expect(short.stderr).toMatch(/too short \(5 characters\).*at least 16/);
    expect(short.stderr).not.toContain("pw123");
    const spaced = await runCli(["config", "set-secret", "serve.bearer_token"], {
      env: envFor(home),
      stdin: "correct horse battery staple\n",
    });
    expect(spaced.code).toBe(4);
    expect(spaced.stderr).toMatch(/cannot send in `Authorization: Bearer …`/);
    expect(readFileSync(homePaths(home).config, "utf8")).toBe(before);
    const good = await runCli(["config", "set-secret", "serve.bearer_token"], {
      env: envFor(home),
      stdin: "0123456789abcdef0123\n",
    });
    expect(good.code).toBe(0);
  });

  it("refuses a webhook secret shorter than 16 characters, and writes nothing", async () => {
    const { home } = fixtureHome(root.dir);
    const before = readFileSync(homePaths(home).config, "utf8");
    const short = await runCli(["config", "set-secret", "webhook.secret"], { env: envFor(home), stdin: "hook\n" });
    expect(short.code).toBe(4);
    expect(short.stderr).toMatch(/`webhook.secret` is too short \(4 characters\)/);
    expect(readFileSync(homePaths(home).config, "utf8")).toBe(before);
  });

  it("needs the passphrase", async () => {
    const { home } = fixtureHome(root.dir);
    const r = await runCli(["config", "set-secret", "webhook.secret"], { env: envFor(home, null), stdin: "v" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no passphrase/);
  });
});
