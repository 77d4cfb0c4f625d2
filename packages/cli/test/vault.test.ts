import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { homePaths, loadMasterSeed, readVault } from "@acp/store";
import { runCli, type CliOutcome } from "./run.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "./home-fixture.js";

const root = tempRoot("vault");
afterAll(root.cleanup);

describe("acp vault set|list|rm", () => {
  it("stores a value from stdin, lists names only, and removes it", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    const set = await runCli(["vault", "set", "GITHUB_TOKEN"], { env, stdin: "ghp_value\n" });
    expect(set.code).toBe(0);
    expect(set.stdout).toBe("stored `GITHUB_TOKEN` in the vault (1 entry)\n");
    await runCli(["vault", "set", "SMTP_PASSWORD", "--json"], { env, stdin: "pw" });
    const seed = loadMasterSeed(home, PASSPHRASE);
    if (!seed.ok) throw new Error("seed");
    expect(readVault(home, seed.value)).toEqual({
      ok: true,
      value: { GITHUB_TOKEN: "ghp_value", SMTP_PASSWORD: "pw" },
    });
    expect(statSync(homePaths(home).vault).mode & 0o777).toBe(0o600);
    const list = await runCli(["vault", "list"], { env });
    expect(list.stdout).toBe("GITHUB_TOKEN\nSMTP_PASSWORD\n");
    expect(JSON.parse((await runCli(["vault", "list", "--json"], { env })).stdout)).toEqual({
      names: ["GITHUB_TOKEN", "SMTP_PASSWORD"],
    });
    const rm = await runCli(["vault", "rm", "GITHUB_TOKEN"], { env });
    expect(rm.code).toBe(0);
    expect(rm.stdout).toBe("removed `GITHUB_TOKEN` from the vault (1 entry left)\n");
    expect((await runCli(["vault", "list"], { env })).stdout).toBe("SMTP_PASSWORD\n");
    const missing = await runCli(["vault", "rm", "GITHUB_TOKEN"], { env });
    // an unknown name is invalid input (4), as an unknown id is for `acp approve` (docs/reference/cli.md)
    expect(missing.code).toBe(4);
    expect(missing.stderr).toBe("acp: the vault has no entry `GITHUB_TOKEN` (see `acp vault list`)\n");
  });

  it("refuses a private key or a vault others can read, naming the file and `chmod 600` (exit 1)", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    expect((await runCli(["vault", "set", "A"], { env, stdin: "a" })).code).toBe(0);
    const p = homePaths(home);
    chmodSync(p.vault, 0o644);
    const vault = await runCli(["vault", "list"], { env });
    expect(vault.code).toBe(1);
    expect(vault.stderr).toContain(`run \`chmod 600 ${p.vault}\``);
    chmodSync(p.vault, 0o600);
    chmodSync(p.privateKey, 0o640);
    const key = await runCli(["vault", "list"], { env });
    expect(key.code).toBe(1);
    expect(key.stderr).toContain(`\`${p.privateKey}\` is readable or writable by others (mode 0640)`);
    expect(key.stderr).toContain(`run \`chmod 600 ${p.privateKey}\``);
    chmodSync(p.privateKey, 0o600);
    expect((await runCli(["vault", "list"], { env })).stdout).toBe("A\n");
  });

  it("warns of a value shorter than 12 characters (an agent can guess it through redaction), naming no value", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    const short = await runCli(["vault", "set", "PIN"], { env, stdin: "4821\n" });
    expect(short.code).toBe(0);
    expect(short.stdout).toBe("stored `PIN` in the vault (1 entry)\n");
    expect(short.stderr).toMatch(
      /^warning: `PIN` is 4 characters long: an agent can guess a short value through the proxy/,
    );
    expect(short.stderr).not.toContain("4821");
    const json = await runCli(["vault", "set", "PASS", "--json"], { env, stdin: "hunter2" });
    expect(JSON.parse(json.stdout)).toEqual({ name: "PASS", replaced: false, entries: 2 });
    expect(json.stderr).toContain("`PASS` is 7 characters long");
    const long = await runCli(["vault", "set", "TOKEN"], { env, stdin: "0123456789ab\n" });
    expect(long.code).toBe(0);
    expect(long.stderr).toBe("");
  });

  it("never takes the value from argv, and does not echo it", async () => {
    const { home } = fixtureHome(root.dir);
    const r = await runCli(["vault", "set", "TOKEN", "argv-canary"], { env: envFor(home) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/takes no value on the command line/);
    expect(r.stdout + r.stderr).not.toContain("argv-canary");
  });

  it("refuses bad names, empty values, a missing or wrong passphrase with clear errors", async () => {
    const { home } = fixtureHome(root.dir);
    expect((await runCli(["vault", "set", "1bad name"], { env: envFor(home), stdin: "v" })).code).toBe(2);
    const empty = await runCli(["vault", "set", "A"], { env: envFor(home), stdin: "" });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no value for `A`/);
    const none = await runCli(["vault", "list"], { env: envFor(home, null) });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no passphrase: set ACP_PASSPHRASE/);
    const wrong = await runCli(["vault", "list"], { env: envFor(home, "nope") });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/wrong passphrase, or keys\/private\.key is corrupted/);
  });

  it("reports a corrupted vault and overwrites nothing", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    await runCli(["vault", "set", "A"], { env, stdin: "1" });
    const path = homePaths(home).vault;
    const corrupted = readFileSync(path, "utf8").replace(
      /"tag": "(.)/,
      (_m, c: string) => `"tag": "${c === "0" ? "1" : "0"}`,
    );
    writeFileSync(path, corrupted);
    for (const argv of [
      ["vault", "set", "B"],
      ["vault", "list"],
      ["vault", "rm", "A"],
    ]) {
      const r = await runCli(argv, { env, stdin: "2" });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/vault does not decrypt with this key .*; it was left as it is/);
    }
    expect(readFileSync(path, "utf8")).toBe(corrupted);
  });
});

describe("secrets never leak", () => {
  it("a planted canary appears in no output of any command and nowhere on disk in plain text", async () => {
    const { home } = fixtureHome(root.dir);
    const env = envFor(home);
    const canary = "CANARY-7f3e9b2c-secret-value";
    const outcomes: CliOutcome[] = [];
    const run = async (argv: string[], stdin?: string): Promise<void> => {
      outcomes.push(await runCli(argv, stdin === undefined ? { env } : { env, stdin }));
    };
    await run(["vault", "set", "CANARY"], `${canary}\n`);
    await run(["vault", "set", "CANARY", "--json"], canary);
    await run(["config", "set-secret", "telegram.bot_token"], canary);
    await run(["config", "set-secret", "webhook.secret", "--json"], canary);
    await run(["vault", "list"]);
    await run(["vault", "list", "--json"]);
    await run(["doctor"]);
    await run(["doctor", "--json"]);
    await run(["vault", "set", "CANARY", canary]);
    await run(["config", "set-secret", "webhook.secret", canary]);
    await run(["proof", "verify", join(home, "vault.json")]);
    await run(["proof", "verify", join(home, "vault.json"), "--request", join(home, "config.yml"), "--json"]);
    await run(["vault", "rm", "CANARY"]);
    await run(["vault", "list"]);
    await run(["init", "--force", "--json"]);
    expect(outcomes.map((o) => o.code)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 3, 0, 0, 0]);
    for (const o of outcomes) expect(o.stdout + o.stderr).not.toContain(canary);
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
      );
    for (const f of files(home)) expect(readFileSync(f).includes(canary), f).toBe(false);
  });
});
