import { randomBytes } from "node:crypto";
import { chownSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { wrapPrivateKey, type ScryptParams } from "@acp/core";
import {
  allowedOwners,
  checkHomePermissions,
  configTemplate,
  createHome,
  homePaths,
  loadMasterSeed,
  readPrivateKeyFile,
  readPublicKeyHex,
  readVault,
  STARTER_POLICY,
  writeVault,
} from "../../src/home/index.js";

const FAST: ScryptParams = { log_n: 15, r: 8, p: 1 };
const SEED = new Uint8Array(32).fill(7);
const NOBODY = 65534;
const OTHER = 12345;
const root = mkdtempSync(join(tmpdir(), "acp-owner-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function newHome(): string {
  const home = join(root, `h${++n}`);
  const r = createHome(home, {
    privateKeyFile: wrapPrivateKey(SEED, null, randomBytes, FAST),
    configText: configTemplate(join(home, "policy.yml")),
    policyText: STARTER_POLICY,
    force: false,
    stamp: "t",
  });
  if (!r.ok) throw new Error(r.issues[0]?.message);
  if (!writeVault(home, { A: "a" }, SEED, randomBytes).ok) throw new Error("vault");
  return home;
}

function code(r: { ok: boolean; issues?: readonly { code: string }[] }): string {
  return r.ok ? "ok" : (r.issues?.[0]?.code ?? "");
}

function message(r: { ok: boolean; issues?: readonly { message: string }[] }): string {
  return r.ok ? "" : (r.issues?.[0]?.message ?? "");
}

describe("allowedOwners", () => {
  it("is the user acp runs as; root's own and, in a home another user owns, that user's too", () => {
    const home = newHome();
    expect(allowedOwners(home, 1000)).toEqual([1000]);
    const owner = statSync(home).uid;
    expect(allowedOwners(home, 0)).toEqual(owner === 0 ? [0] : [0, owner]);
    expect(allowedOwners(join(root, "missing"), 0)).toEqual([0]);
  });
});

// chown needs root: this machine runs the tests as root
describe.runIf(process.getuid?.() === 0)("a home's secret files owned by another user", () => {
  it("refuses keys/private.key owned by nobody, naming the file, its owner and `chown`, and leaves it as it is", () => {
    const home = newHome();
    const p = homePaths(home).privateKey;
    expect(loadMasterSeed(home, undefined).ok).toBe(true);
    const before = readFileSync(p);
    chownSync(p, NOBODY, NOBODY);
    for (const r of [readPrivateKeyFile(home), loadMasterSeed(home, undefined)]) {
      expect(code(r)).toBe("key_file_not_owned");
      expect(message(r)).toBe(
        `\`${p}\` is owned by uid ${NOBODY}, not by uid 0 that acp runs as: whoever owns a key file can replace it; check it, then run \`chown 0 ${p}\``,
      );
    }
    expect(readFileSync(p).equals(before)).toBe(true);
    expect(statSync(p).uid).toBe(NOBODY);
    expect(checkHomePermissions(home).find((c) => c.name === "permissions keys/private.key")).toEqual({
      status: "fail",
      name: "permissions keys/private.key",
      detail: `\`${p}\` is owned by uid ${NOBODY}, not you`,
    });
    chownSync(p, 0, 0);
    expect(loadMasterSeed(home, undefined).ok).toBe(true);
  });

  it("refuses keys/public.key owned by nobody, though others may read it", () => {
    const home = newHome();
    const p = homePaths(home).publicKey;
    chownSync(p, NOBODY, NOBODY);
    expect(code(readPublicKeyHex(home))).toBe("key_file_not_owned");
    expect(code(loadMasterSeed(home, undefined))).toBe("key_file_not_owned");
    expect(message(readPublicKeyHex(home))).toContain(`run \`chown 0 ${p}\``);
    chownSync(p, 0, 0);
    expect(readPublicKeyHex(home).ok).toBe(true);
  });

  it("refuses vault.json owned by nobody (vault_not_owned) and leaves it as it is", () => {
    const home = newHome();
    const p = homePaths(home).vault;
    const before = readFileSync(p);
    chownSync(p, NOBODY, NOBODY);
    const r = readVault(home, SEED);
    expect(code(r)).toBe("vault_not_owned");
    expect(message(r)).toBe(
      `\`${p}\` is owned by uid ${NOBODY}, not by uid 0 that acp runs as: whoever owns it can roll it back; check it, then run \`chown 0 ${p}\``,
    );
    expect(readFileSync(p).equals(before)).toBe(true);
    expect(statSync(p).uid).toBe(NOBODY);
    chownSync(p, 0, 0);
    expect(readVault(home, SEED)).toEqual({ ok: true, value: { A: "a" } });
  });

  it("lets root read a person's home (sudo -E acp run), but not a third user's file in it", () => {
    const home = newHome();
    const paths = homePaths(home);
    for (const f of [
      paths.home,
      paths.keysDir,
      paths.privateKey,
      paths.publicKey,
      paths.config,
      paths.policy,
      paths.vault,
    ])
      chownSync(f, NOBODY, NOBODY);
    expect(allowedOwners(home, 0)).toEqual([0, NOBODY]);
    expect(loadMasterSeed(home, undefined).ok).toBe(true);
    expect(readVault(home, SEED).ok).toBe(true);
    expect(checkHomePermissions(home).filter((c) => c.status !== "ok")).toEqual([]);
    chownSync(paths.vault, OTHER, OTHER);
    expect(code(readVault(home, SEED))).toBe("vault_not_owned");
    chownSync(paths.privateKey, OTHER, OTHER);
    expect(code(loadMasterSeed(home, undefined))).toBe("key_file_not_owned");
    // root's own file in it is fine
    chownSync(paths.privateKey, 0, 0);
    chownSync(paths.vault, 0, 0);
    expect(loadMasterSeed(home, undefined).ok).toBe(true);
    expect(readVault(home, SEED).ok).toBe(true);
  });
});
