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
    const through = await runCli(["config", "set-secret", "version.x"], { env: envFor(home), stdin: "v" });
    expect(through.code).toBe(1);
    expect(through.stderr).toMatch(/goes through a value that is not a map/);
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
