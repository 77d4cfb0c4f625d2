import { randomBytes } from "node:crypto";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, parseDocument } from "yaml";
import {
  compilePolicy,
  createPipeline,
  parsePolicy,
  policySource,
  wrapPrivateKey,
  sealConfigSecret,
  type ScryptParams,
} from "@acp/core";
import {
  checkHomePermissions,
  configTemplate,
  createHome,
  homePaths,
  isExistingHome,
  loadMasterSeed,
  readConfigDocument,
  readConfigSecret,
  readFileUpTo,
  readPublicKeyHex,
  readVault,
  STARTER_POLICY,
  writeConfigValue,
  writeFileAtomic,
  writeVault,
} from "../../src/home/index.js";

const FAST: ScryptParams = { log_n: 15, r: 8, p: 1 };
const SEED = new Uint8Array(32).fill(9);
const root = mkdtempSync(join(tmpdir(), "acp-home-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function newHome(passphrase: string | null = "pw"): string {
  const home = join(root, `h${++n}`);
  const r = createHome(home, {
    privateKeyFile: wrapPrivateKey(SEED, passphrase, randomBytes, FAST),
    configText: configTemplate(join(home, "policy.yml")),
    policyText: STARTER_POLICY,
    force: false,
    stamp: "t",
  });
  if (!r.ok) throw new Error(r.issues[0]?.message);
  return home;
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

describe("home layout", () => {
  it("creates the home and keys/ 0700 and every file 0600", () => {
    const home = newHome();
    const p = homePaths(home);
    expect(mode(home)).toBe(0o700);
    expect(mode(p.keysDir)).toBe(0o700);
    for (const f of [p.config, p.policy, p.privateKey, p.publicKey]) expect(mode(f)).toBe(0o600);
    expect(readFileSync(p.publicKey, "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    expect(checkHomePermissions(home).every((c) => c.status === "ok")).toBe(true);
  });

  it("refuses to overwrite an existing home without force, and moves the old vault aside with it", () => {
    const home = newHome();
    writeVault(home, { A: "1" }, SEED, randomBytes);
    const input = {
      privateKeyFile: wrapPrivateKey(SEED, "pw", randomBytes, FAST),
      configText: 'version: "1"\n',
      policyText: STARTER_POLICY,
      stamp: "2026",
    };
    const refused = createHome(home, { ...input, force: false });
    expect(refused.ok ? "ok" : refused.issues[0]?.code).toBe("home_exists");
    expect(readFileSync(homePaths(home).config, "utf8")).toContain("# ACP configuration");
    const forced = createHome(home, { ...input, force: true });
    expect(forced.ok).toBe(true);
    if (forced.ok) expect(forced.value.vaultMovedTo).toBe(`${homePaths(home).vault}.replaced-2026`);
    expect(existsSync(`${homePaths(home).vault}.replaced-2026`)).toBe(true);
    expect(existsSync(homePaths(home).vault)).toBe(false);
  });

  it("takes a directory holding only pins.json (a proxy run before acp init) for no home, and makes one there keeping it", () => {
    const home = join(root, `h${++n}`);
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(join(home, "pins.json"), '{ "version": 1, "servers": {} }\n', { mode: 0o600 });
    expect(isExistingHome(home)).toBe(false);
    const made = createHome(home, {
      privateKeyFile: wrapPrivateKey(SEED, null, randomBytes, FAST),
      configText: 'version: "1"\n',
      policyText: STARTER_POLICY,
      force: false,
      stamp: "t",
    });
    expect(made.ok).toBe(true);
    expect(isExistingHome(home)).toBe(true);
    expect(readFileSync(join(home, "pins.json"), "utf8")).toBe('{ "version": 1, "servers": {} }\n');
    expect(isExistingHome(join(root, "never-made"))).toBe(false);
    // a policy written by hand makes a home (audited, with a key that lives as long as the process)
    const byHand = join(root, `h${++n}`);
    mkdirSync(byHand, { mode: 0o700 });
    writeFileSync(join(byHand, "policy.yml"), STARTER_POLICY, { mode: 0o600 });
    expect(isExistingHome(byHand)).toBe(true);
  });

  it("flags files others can read and directories others can enter", () => {
    const home = newHome();
    chmodSync(homePaths(home).privateKey, 0o644);
    chmodSync(home, 0o755);
    const bad = checkHomePermissions(home)
      .filter((c) => c.status === "fail")
      .map((c) => c.name);
    expect(bad).toEqual(["permissions home", "permissions keys/private.key"]);
  });

  it("writes files atomically with mode 0600 and leaves no temporary file", () => {
    const dir = join(root, "atomic");
    createHome(dir, {
      privateKeyFile: wrapPrivateKey(SEED, null, randomBytes),
      configText: "",
      policyText: "",
      force: false,
      stamp: "",
    });
    const target = join(dir, "x.json");
    writeFileAtomic(target, "one");
    writeFileAtomic(target, "two");
    expect(readFileSync(target, "utf8")).toBe("two");
    expect(mode(target)).toBe(0o600);
    expect(readFileSync(join(dir, "x.json"), "utf8")).toBe("two");
    expect(statSync(dir).isDirectory()).toBe(true);
  });
});

describe("starter files", () => {
  it("the config template is §8.1 YAML with a comment on every key", () => {
    const text = configTemplate("/home/me/.acp/policy.yml");
    const cfg = parse(text) as Record<string, unknown>;
    expect(Object.keys(cfg)).toEqual(["version", "channel", "telegram", "webhook", "proxy", "session", "defaults"]);
    // the session runtime watches for injected instructions from the start, reads included
    expect(cfg["session"]).toEqual({
      escalate_after_instructions: true,
      reads: { after_instructions: "ask" },
      provenance: { remember_hours: 24 },
    });
    const lines = text.split("\n");
    for (const [i, line] of lines.entries()) {
      if (/^\s*[a-z_]+:/.test(line)) expect(lines[i - 1] ?? "", `line ${i + 1}: ${line}`).toMatch(/^\s*#/);
    }
  });

  it("the starter policy validates and is safe by default", () => {
    const r = parsePolicy(STARTER_POLICY);
    expect(r.ok ? "ok" : r.issues).toBe("ok");
    if (!r.ok) return;
    expect(r.value.default_action).toBe("ask");
    const byCategory = (c: string): string | undefined => r.value.rules.find((x) => x.match.category === c)?.action;
    expect(byCategory("read")).toBe("allow");
    expect(byCategory("financial")).toBe("deny");
    expect(byCategory("system")).toBe("deny");
    expect(byCategory("write")).toBe("ask");
    expect(byCategory("communication")).toBe("ask");
  });

  it("the starter policy refuses money tools the built-in table reads by their first word (send_money is money)", async () => {
    const r = parsePolicy(STARTER_POLICY);
    if (!r.ok) throw new Error("starter policy");
    const pipeline = createPipeline([policySource(compilePolicy(r.value))], { classify: r.value.classify });
    const at = new Date("2026-03-02T10:00:00Z");
    for (const tool of [
      "send_money",
      "send_payment",
      "make_payment",
      "wire_funds",
      "refund_order",
      "schedule_transaction",
    ]) {
      const d = await pipeline.decide({ server: "bank", tool, arguments: {} }, at);
      expect({ tool, route: d.route, rule: d.rule, category: d.category }).toEqual({
        tool,
        route: "refuse",
        rule: "policy:refuse-financial",
        category: "financial",
      });
    }
    // a read about money is still a read
    expect((await pipeline.decide({ server: "bank", tool: "get_balance", arguments: {} }, at)).route).toBe("accept");
  });
});

describe("keys", () => {
  it("opens the master key with the passphrase and explains what is wrong otherwise", () => {
    const home = newHome("secret pass");
    const good = loadMasterSeed(home, "secret pass");
    expect(good.ok && Buffer.from(good.value).equals(Buffer.from(SEED))).toBe(true);
    const code = (r: ReturnType<typeof loadMasterSeed>): string => (r.ok ? "ok" : (r.issues[0]?.code ?? ""));
    expect(code(loadMasterSeed(home, "nope"))).toBe("key_passphrase_wrong");
    expect(code(loadMasterSeed(home, undefined))).toBe("key_passphrase_required");
    const p = homePaths(home);
    const text = readFileSync(p.privateKey, "utf8");
    writeFileSync(p.privateKey, text.slice(0, 40));
    expect(code(loadMasterSeed(home, "secret pass"))).toBe("key_file_malformed");
    rmSync(p.privateKey);
    expect(code(loadMasterSeed(home, "secret pass"))).toBe("key_missing");
  });
});

describe("files only their owner may read", () => {
  it("refuses a private key group or others can read or write, naming the file and the chmod fix", () => {
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o602]) {
      const home = newHome();
      chmodSync(homePaths(home).privateKey, mode);
      const r = loadMasterSeed(home, "pw");
      expect(r.ok ? "ok" : r.issues[0]?.code, mode.toString(8)).toBe("key_file_too_open");
      const message = r.ok ? "" : (r.issues[0]?.message ?? "");
      expect(message).toContain(
        `\`${homePaths(home).privateKey}\` is readable or writable by others (mode 0${mode.toString(8)})`,
      );
      expect(message).toContain(`run \`chmod 600 ${homePaths(home).privateKey}\``);
    }
    // an unencrypted key as well; a readable public key is fine (it is public)
    const plain = newHome(null);
    chmodSync(homePaths(plain).publicKey, 0o644);
    expect(loadMasterSeed(plain, undefined).ok).toBe(true);
    chmodSync(homePaths(plain).privateKey, 0o644);
    const r = loadMasterSeed(plain, undefined);
    expect(r.ok ? "ok" : r.issues[0]?.code).toBe("key_file_too_open");
  });

  it("lets others read the public key but refuses one group or others can write", () => {
    const home = newHome();
    chmodSync(homePaths(home).publicKey, 0o644);
    expect(readPublicKeyHex(home).ok).toBe(true);
    for (const mode of [0o664, 0o646]) {
      chmodSync(homePaths(home).publicKey, mode);
      const r = readPublicKeyHex(home);
      expect(r.ok ? "ok" : r.issues[0]?.code).toBe("key_file_too_open");
      expect(r.ok ? "" : r.issues[0]?.message).toBe(
        `\`${homePaths(home).publicKey}\` is writable by others (mode 0${mode.toString(8)}): whoever can change it decides which signatures verify; run \`chmod go-w ${homePaths(home).publicKey}\``,
      );
      expect(loadMasterSeed(home, "pw").ok).toBe(false);
    }
  });

  it("refuses a vault group or others can read, and leaves it as it is", () => {
    const home = newHome();
    expect(writeVault(home, { A: "a" }, SEED, randomBytes).ok).toBe(true);
    chmodSync(homePaths(home).vault, 0o644);
    const r = readVault(home, SEED);
    expect(r.ok ? "ok" : r.issues[0]?.code).toBe("vault_too_open");
    expect(r.ok ? "" : r.issues[0]?.message).toContain(`run \`chmod 600 ${homePaths(home).vault}\``);
    chmodSync(homePaths(home).vault, 0o600);
    expect(readVault(home, SEED)).toEqual({ ok: true, value: { A: "a" } });
  });

  it("writes 0600 key, vault and config files under a permissive umask, which then pass", () => {
    const old = process.umask(0o000);
    let home: string;
    try {
      home = newHome();
      expect(writeVault(home, { A: "a" }, SEED, randomBytes).ok).toBe(true);
      const doc = readConfigDocument(home);
      if (!doc.ok) throw new Error("config");
      expect(writeConfigValue(home, doc.value, "telegram.chat_id", "1").ok).toBe(true);
    } finally {
      process.umask(old);
    }
    const p = homePaths(home);
    for (const f of [p.privateKey, p.publicKey, p.config, p.policy, p.vault])
      expect(statSync(f).mode & 0o777).toBe(0o600);
    for (const d of [p.home, p.keysDir]) expect(statSync(d).mode & 0o777).toBe(0o700);
    expect(checkHomePermissions(home).filter((c) => c.status !== "ok")).toEqual([]);
    expect(loadMasterSeed(home, "pw").ok).toBe(true);
    expect(readVault(home, SEED).ok).toBe(true);
  });
});

describe("reading the home's files", () => {
  it("reads a file up to a limit and never reads on past it: a larger file, /dev/zero", () => {
    const path = join(root, `bytes-${++n}`);
    writeFileSync(path, "0123456789");
    expect(readFileUpTo(path, 10)?.toString()).toBe("0123456789");
    expect(readFileUpTo(path, 9)).toBeUndefined();
    expect(readFileUpTo("/dev/zero", 1024 * 1024)).toBeUndefined();
    expect(() => readFileUpTo(join(root, "missing"), 10)).toThrow(/ENOENT/);
    expect(() => readFileUpTo("/dev/zero", 10, { regularOnly: true })).toThrow(/not a regular file/);
    expect(() => readFileUpTo(root, 10, { regularOnly: true })).toThrow(/EISDIR/);
    expect(readFileUpTo(path, 10, { regularOnly: true })?.toString()).toBe("0123456789");
  });

  it("a key, vault or config file that is /dev/zero is refused, not read until memory runs out", () => {
    const home = newHome();
    const p = homePaths(home);
    for (const file of [p.publicKey, p.vault, p.config]) {
      rmSync(file, { force: true });
      symlinkSync("/dev/zero", file);
    }
    const notAFile = expect.stringContaining("not a regular file") as unknown;
    expect(readPublicKeyHex(home)).toMatchObject({
      ok: false,
      issues: [{ code: "key_unreadable", message: notAFile }],
    });
    expect(readVault(home, SEED)).toMatchObject({
      ok: false,
      issues: [{ code: "vault_unreadable", message: notAFile }],
    });
    expect(readConfigDocument(home)).toMatchObject({
      ok: false,
      issues: [{ code: "config_unreadable", message: notAFile }],
    });
  });
});

describe("vault file on disk", () => {
  it("round-trips, rewrites with a fresh iv, and never holds the value in plain text", () => {
    const home = newHome();
    expect(readVault(home, SEED)).toEqual({ ok: true, value: {} });
    writeVault(home, { TOKEN: "canary-vault-value" }, SEED, randomBytes);
    const first = readFileSync(homePaths(home).vault, "utf8");
    writeVault(home, { TOKEN: "canary-vault-value" }, SEED, randomBytes);
    const second = readFileSync(homePaths(home).vault, "utf8");
    expect(first).not.toContain("canary");
    expect((JSON.parse(first) as { iv: string }).iv).not.toBe((JSON.parse(second) as { iv: string }).iv);
    expect(mode(homePaths(home).vault)).toBe(0o600);
    expect(readVault(home, SEED)).toEqual({ ok: true, value: { TOKEN: "canary-vault-value" } });
  });

  it("reports a corrupted vault and leaves it as it is", () => {
    const home = newHome();
    writeFileSync(homePaths(home).vault, '{"version":1,', { mode: 0o600 });
    const r = readVault(home, SEED);
    expect(r.ok ? "ok" : r.issues[0]?.code).toBe("vault_malformed");
    expect(readFileSync(homePaths(home).vault, "utf8")).toBe('{"version":1,');
  });
});

describe("config.yml", () => {
  it("sets a sealed secret and keeps every comment", () => {
    const home = newHome();
    const doc = readConfigDocument(home);
    if (!doc.ok) throw new Error("config");
    const sealed = sealConfigSecret("123:tok-canary", "telegram.bot_token", SEED, randomBytes);
    expect(writeConfigValue(home, doc.value, "telegram.bot_token", sealed).ok).toBe(true);
    const text = readFileSync(homePaths(home).config, "utf8");
    const commentsBefore = configTemplate(join(home, "policy.yml"))
      .split("\n")
      .filter((l) => l.trim().startsWith("#"));
    const commentsAfter = text.split("\n").filter((l) => l.trim().startsWith("#"));
    expect(commentsAfter).toEqual(commentsBefore);
    expect(text).not.toContain("canary");
    const again = readConfigDocument(home);
    if (!again.ok) throw new Error("config");
    expect(readConfigSecret(again.value, "telegram.bot_token", SEED)).toEqual({ ok: true, value: "123:tok-canary" });
    expect(readConfigSecret(again.value, "webhook.secret", SEED)).toEqual({ ok: true, value: undefined });
  });

  it("names the file a secret came from: config.yml by default, the given file otherwise", () => {
    const sealed = sealConfigSecret("hook-canary", "webhook.secret", SEED, randomBytes);
    const doc = parseDocument(`telegram:\n  bot_token: "123:plain"\nwebhook:\n  secret: "${sealed}"\n`);
    const plain = readConfigSecret(doc, "telegram.bot_token", SEED);
    expect(plain.ok ? "ok" : plain.issues[0]).toMatchObject({
      code: "config_secret_plain",
      message: "`telegram.bot_token` in config.yml is not sealed (run `acp config set-secret telegram.bot_token`)",
    });
    const elsewhere = readConfigSecret(doc, "telegram.bot_token", SEED, "/etc/acp/team.yml");
    expect(elsewhere.ok ? "" : elsewhere.issues[0]?.message).toBe(
      "`telegram.bot_token` in /etc/acp/team.yml is not sealed (run `acp config set-secret telegram.bot_token`, " +
        "then copy its `encrypted:` value from config.yml into /etc/acp/team.yml)",
    );
    expect(readConfigSecret(doc, "webhook.secret", SEED, "/etc/acp/team.yml")).toEqual({
      ok: true,
      value: "hook-canary",
    });
    const otherKey = readConfigSecret(doc, "webhook.secret", new Uint8Array(32).fill(1), "/etc/acp/team.yml");
    expect(otherKey.ok ? "" : otherKey.issues[0]?.message).toMatch(
      /^\/etc\/acp\/team\.yml: `webhook\.secret`: does not decrypt/,
    );
    const byDefault = readConfigSecret(doc, "webhook.secret", new Uint8Array(32).fill(1));
    expect(byDefault.ok ? "" : byDefault.issues[0]?.message).toMatch(/^`webhook\.secret`: does not decrypt/);
  });

  it("refuses a path through a scalar and reports unparsable YAML with its position", () => {
    const home = newHome();
    const doc = readConfigDocument(home);
    if (!doc.ok) throw new Error("config");
    const r = writeConfigValue(home, doc.value, "version.x", "y");
    expect(r.ok ? "ok" : r.issues[0]?.code).toBe("config_path_invalid");
    writeFileSync(homePaths(home).config, "a: [\n");
    const bad = readConfigDocument(home);
    expect(bad.ok ? "ok" : bad.issues[0]?.code).toBe("config_malformed");
  });
});
