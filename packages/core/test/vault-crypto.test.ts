import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  checkScryptParams,
  DEFAULT_SCRYPT_PARAMS,
  ed25519KeyPairFromSeed,
  isVaultName,
  openConfigSecret,
  openVault,
  parsePrivateKeyFile,
  sealConfigSecret,
  sealVault,
  unwrapPrivateKey,
  SCRYPT_FLOOR,
  wrapPrivateKey,
  type ScryptParams,
} from "../src/index.js";
import { TEST_SEED } from "./proof-fixtures.js";

const FAST: ScryptParams = { log_n: 15, r: 8, p: 1 };
const OTHER_SEED = Uint8Array.from({ length: 32 }, () => 7);

describe("vault file (§2.3)", () => {
  it("round-trips entries, in the exact §2.3 shape, with a fresh salt and iv on every write", () => {
    const entries = { GITHUB_TOKEN: "ghp_canary", "smtp.password": "hunter2" };
    const a = sealVault(entries, TEST_SEED, randomBytes);
    const b = sealVault(entries, TEST_SEED, randomBytes);
    expect(Object.keys(a)).toEqual(["version", "encryption", "salt", "iv", "data", "tag"]);
    expect(a.encryption).toBe("aes-256-gcm");
    expect(a.iv).not.toBe(b.iv);
    expect(a.salt).not.toBe(b.salt);
    expect(JSON.stringify(a)).not.toContain("canary");
    const opened = openVault(JSON.parse(JSON.stringify(a)), TEST_SEED);
    expect(opened).toEqual({ ok: true, value: entries });
  });

  it("keeps every entry whose name it accepts, names an object holds specially included; `__proto__` is not a name", () => {
    const tricky = ["__proto__", "constructor", "toString", "hasOwnProperty", "__defineGetter__", "valueOf"];
    expect(isVaultName("__proto__")).toBe(false);
    const names = tricky.filter(isVaultName);
    expect(names).toHaveLength(tricky.length - 1);
    const entries = Object.fromEntries(names.map((name) => [name, `value of ${name}`]));
    const opened = openVault(JSON.parse(JSON.stringify(sealVault(entries, TEST_SEED, randomBytes))), TEST_SEED);
    expect(opened.ok && Object.entries(opened.value).sort()).toEqual(Object.entries(entries).sort());
  });

  it("refuses another key and any flipped byte, without throwing", () => {
    const file = sealVault({ A: "1" }, TEST_SEED, randomBytes);
    const wrong = openVault(file, OTHER_SEED);
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.issues[0]?.code).toBe("vault_decrypt_failed");
    fc.assert(
      fc.property(fc.constantFrom("salt", "iv", "data", "tag" as const), fc.nat(), (field, at) => {
        const hex = file[field];
        const i = at % hex.length;
        const flipped = hex.slice(0, i) + (hex[i] === "0" ? "1" : "0") + hex.slice(i + 1);
        expect(openVault({ ...file, [field]: flipped }, TEST_SEED).ok).toBe(false);
      }),
    );
  });

  it("reports a malformed vault as such", () => {
    const file = sealVault({ A: "1" }, TEST_SEED, randomBytes);
    for (const bad of [
      null,
      [],
      "x",
      { ...file, extra: 1 },
      { ...file, version: 2 },
      { ...file, iv: "zz" },
      { ...file, tag: file.tag.toUpperCase() },
    ]) {
      const r = openVault(bad, TEST_SEED);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issues[0]?.code).toBe("vault_malformed");
    }
  });
});

describe("config secrets (`encrypted:<base64>`)", () => {
  it("round-trips and binds the sealed value to its config path", () => {
    const sealed = sealConfigSecret("123:ABC-canary", "telegram.bot_token", TEST_SEED, randomBytes);
    expect(sealed).toMatch(/^encrypted:[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain("canary");
    expect(openConfigSecret(sealed, "telegram.bot_token", TEST_SEED)).toEqual({ ok: true, value: "123:ABC-canary" });
    const moved = openConfigSecret(sealed, "webhook.secret", TEST_SEED);
    expect(moved.ok).toBe(false);
    if (!moved.ok) expect(moved.issues[0]?.code).toBe("config_secret_decrypt_failed");
    expect(openConfigSecret(sealed, "telegram.bot_token", OTHER_SEED).ok).toBe(false);
    for (const bad of ["plain", "encrypted:", "encrypted:!!!", sealed.slice(0, 30)]) {
      const r = openConfigSecret(bad, "telegram.bot_token", TEST_SEED);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issues[0]?.message).not.toContain("canary");
    }
  });
});

describe("private key file (scrypt + AES-256-GCM)", () => {
  const pub = ed25519KeyPairFromSeed(TEST_SEED).publicKeyHex;

  it("wraps with a passphrase and opens only with it", () => {
    const file = wrapPrivateKey(TEST_SEED, "correct horse", randomBytes, FAST);
    const text = JSON.stringify(file);
    expect(text).not.toContain(Buffer.from(TEST_SEED).toString("hex"));
    const parsed = parsePrivateKeyFile(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.public_key).toBe(pub);
    const opened = unwrapPrivateKey(parsed.value, "correct horse");
    expect(opened.ok && Buffer.from(opened.value).equals(Buffer.from(TEST_SEED))).toBe(true);
    const wrong = unwrapPrivateKey(parsed.value, "wrong horse");
    expect(wrong.ok ? "ok" : wrong.issues[0]?.code).toBe("key_passphrase_wrong");
    const none = unwrapPrivateKey(parsed.value, undefined);
    expect(none.ok ? "ok" : none.issues[0]?.code).toBe("key_passphrase_required");
  });

  it("marks a key stored without a passphrase and still checks it against its public key", () => {
    const file = wrapPrivateKey(TEST_SEED, null, randomBytes);
    expect(file.protection).toBe("none");
    if (file.protection === "none") expect(file.warning).toMatch(/UNENCRYPTED/);
    expect(unwrapPrivateKey(file, undefined).ok).toBe(true);
    const swapped = { ...file, public_key: ed25519KeyPairFromSeed(OTHER_SEED).publicKeyHex };
    const r = unwrapPrivateKey(swapped, undefined);
    expect(r.ok ? "ok" : r.issues[0]?.code).toBe("key_mismatch");
  });

  it("refuses truncated, corrupted and absurd key files with `key_file_malformed`", () => {
    const text = JSON.stringify(wrapPrivateKey(TEST_SEED, "pw", randomBytes, FAST));
    const file = JSON.parse(text) as Record<string, unknown>;
    const bad = [
      text.slice(0, text.length - 5),
      "",
      "null",
      JSON.stringify({ ...file, protection: "rot13" }),
      JSON.stringify({ ...file, ciphertext: "00" }),
      JSON.stringify({ ...file, kdf: { ...(file["kdf"] as object), log_n: 15.5 } }),
      JSON.stringify({ ...file, kdf: { ...(file["kdf"] as object), r: "8" } }),
      JSON.stringify({ ...file, public_key: "AB".repeat(32) }),
    ];
    for (const [i, t] of bad.entries()) {
      const r = parsePrivateKeyFile(t);
      expect(r.ok ? "ok" : r.issues[0]?.code, `case ${i}`).toBe("key_file_malformed");
    }
  });

  it("refuses scrypt parameters below the floor (`key_kdf_too_weak`) or too costly (`key_kdf_too_costly`)", () => {
    const file = JSON.parse(JSON.stringify(wrapPrivateKey(TEST_SEED, "pw", randomBytes, FAST))) as Record<
      string,
      unknown
    >;
    const withKdf = (kdf: Partial<ScryptParams>): string =>
      JSON.stringify({ ...file, kdf: { ...(file["kdf"] as object), ...kdf } });
    const codeOf = (text: string): string => {
      const r = parsePrivateKeyFile(text);
      return r.ok ? "ok" : (r.issues[0]?.code ?? "");
    };
    for (const weak of [{ log_n: 10 }, { log_n: 14 }, { r: 1 }, { r: 7 }, { p: 0 }])
      expect(codeOf(withKdf(weak)), JSON.stringify(weak)).toBe("key_kdf_too_weak");
    for (const costly of [{ log_n: 40 }, { log_n: 21 }, { log_n: 20, r: 16 }, { log_n: 19 }, { r: 64 }, { p: 5 }])
      expect(codeOf(withKdf(costly)), JSON.stringify(costly)).toBe("key_kdf_too_costly");
    expect(codeOf(withKdf({ log_n: 15, r: 8, p: 1 }))).toBe("ok");
    expect(codeOf(withKdf({ log_n: 18, r: 8, p: 4 }))).toBe("ok");
    const weak = parsePrivateKeyFile(withKdf({ log_n: 10 }));
    expect(weak.ok ? "" : weak.issues[0]?.message).toMatch(
      /too weak \(N = 2\^10, r = 8, p = 1; at least N = 2\^15.*acp init --force/,
    );
    // nor does a file built in memory open, nor does acp write one
    const built = wrapPrivateKey(TEST_SEED, "pw", randomBytes, FAST);
    if (built.protection === "none") throw new Error("encrypted expected");
    const lowered = unwrapPrivateKey({ ...built, kdf: { ...built.kdf, log_n: 10 } }, "pw");
    expect(lowered.ok ? "ok" : lowered.issues[0]?.code).toBe("key_kdf_too_weak");
    expect(() => wrapPrivateKey(TEST_SEED, "pw", randomBytes, { log_n: 10, r: 8, p: 1 })).toThrow(/too weak/);
    expect(checkScryptParams(DEFAULT_SCRYPT_PARAMS)).toBeUndefined();
    expect(checkScryptParams(SCRYPT_FLOOR)).toBeUndefined();
  });

  it("detects a flipped ciphertext byte as a wrong passphrase or corruption", () => {
    const file = wrapPrivateKey(TEST_SEED, "pw", randomBytes, FAST);
    if (file.protection === "none") throw new Error("expected encrypted");
    const c = file.ciphertext;
    const flipped = { ...file, ciphertext: (c[0] === "0" ? "1" : "0") + c.slice(1) };
    const r = unwrapPrivateKey(flipped, "pw");
    expect(r.ok ? "ok" : r.issues[0]?.code).toBe("key_passphrase_wrong");
  });
});
