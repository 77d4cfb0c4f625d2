/**
 * `acp init` on a directory that already holds an audit log signed with another key: one an `acp proxy`
 * run before `acp init` wrote (before the fix of c084e91 a second start took the directory it made for
 * pins.json for a home and signed the log's checkpoints with a key thrown away at exit), or the old key's
 * log of a home `acp init --force` re-keys. Before, init left the log there: the next proxy extended it
 * and `acp audit verify` refused it for good (exit 3) while `acp doctor` said "ok". Now init moves the log
 * and its anchor aside together (`audit.jsonl.before-init-<time>`), never deleted, and says so; the next
 * audited command starts a new log that verifies.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ed25519KeyPairFromSeed } from "@acp/core";
import { loadMasterSeed, openAuditLog } from "@acp/store";
import { runCli } from "./run.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "./home-fixture.js";

const root = tempRoot("init-foreign-audit-log");
afterAll(root.cleanup);

/** `runCli`'s clock, as init stamps a moved file with it. */
const STAMP = "2026-01-15T12-00-00-000Z";

/** A log of 3 events and its closing checkpoint (line 4), signed with `key`, with its anchor beside it. */
async function signedLog(path: string, key: KeyObject): Promise<void> {
  const log = await openAuditLog(path, { clock: () => new Date(), signer: key });
  for (let i = 0; i < 3; i++) await log.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
  await log.close();
}

function hexOf(publicKey: KeyObject): string {
  const x = publicKey.export({ format: "jwk" }).x ?? "";
  return Buffer.from(x, "base64url").toString("hex");
}

interface Check {
  status: string;
  name: string;
  detail: string;
}

describe("acp init: an audit log signed with another key", () => {
  it("is moved aside with its anchor on a directory an acp proxy used before acp init; pins and state stay", async () => {
    const home = join(root.dir, "before-init", ".acp");
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const log = join(home, "audit.jsonl");
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    await signedLog(log, privateKey);
    writeFileSync(join(home, "pins.json"), '{"version":"1","servers":{}}\n', { mode: 0o600 });
    writeFileSync(join(home, "state.db"), "state of the proxy before init", { mode: 0o600 });
    const logBytes = readFileSync(log, "utf8");
    const anchorBytes = readFileSync(`${log}.checkpoint`, "utf8");
    const env = envFor(home, null);

    const init = await runCli(["init", "--json", "--no-passphrase"], { env });
    expect(init.code).toBe(0);
    const moved = `${log}.before-init-${STAMP}`;
    expect((JSON.parse(init.stdout) as { audit_moved_to: string | null }).audit_moved_to).toBe(moved);
    expect(init.stderr).toContain(
      `warning: the old audit log was signed with another key (an acp proxy run before acp init, or the home's old key), which the new key cannot verify; moved it and its anchor to ${moved}`,
    );
    expect(existsSync(log)).toBe(false);
    expect(existsSync(`${log}.checkpoint`)).toBe(false);
    // the marker that it had an anchor goes with it: left, the new log's writer would refuse (audit_anchor_missing)
    expect(existsSync(`${log}.anchored`)).toBe(false);
    expect(existsSync(`${moved}.anchored`)).toBe(true);
    // kept, whole, with its anchor beside it: it still verifies with the key that signed it
    expect(readFileSync(moved, "utf8")).toBe(logBytes);
    expect(readFileSync(`${moved}.checkpoint`, "utf8")).toBe(anchorBytes);
    const oldKey = join(root.dir, "before-init", "old.pub");
    writeFileSync(oldKey, `${hexOf(publicKey)}\n`);
    expect((await runCli(["audit", "verify", moved, "--public-key", oldKey], { env })).code).toBe(0);
    expect(readFileSync(join(home, "pins.json"), "utf8")).toBe('{"version":"1","servers":{}}\n');
    expect(readFileSync(join(home, "state.db"), "utf8")).toBe("state of the proxy before init");

    // the next writer starts a new log under the home's key: acp audit verify and acp doctor agree
    const seed = loadMasterSeed(home, undefined);
    if (!seed.ok) throw new Error(seed.issues[0]?.message);
    await signedLog(log, ed25519KeyPairFromSeed(seed.value).privateKey);
    const verified = await runCli(["audit", "verify"], { env });
    expect(verified.stderr).toBe("");
    expect(verified.code).toBe(0);
    const doctor = await runCli(["doctor", "--json"], { env });
    const check = (JSON.parse(doctor.stdout) as { checks: Check[] }).checks.find((c) => c.name === "audit log");
    expect(check).toEqual({
      status: "ok",
      name: "audit log",
      detail: "audit.jsonl: its anchor's signed checkpoint is line 4",
    });
  });

  it("is moved aside by acp init --force, which replaces the key that signed it", async () => {
    const { home, key } = fixtureHome(root.dir);
    const log = join(home, "audit.jsonl");
    await signedLog(log, key.privateKey);
    const logBytes = readFileSync(log, "utf8");
    const forced = await runCli(["init", "--force"], { env: envFor(home, PASSPHRASE) });
    expect(forced.code).toBe(0);
    const moved = `${log}.before-init-${STAMP}`;
    expect(forced.stderr).toContain(`moved it and its anchor to ${moved}`);
    expect(readFileSync(moved, "utf8")).toBe(logBytes);
    expect(existsSync(`${moved}.checkpoint`)).toBe(true);
    expect(existsSync(log)).toBe(false);
  });

  it("leaves alone a log with nothing signed in it, which any key can extend", async () => {
    const home = join(root.dir, "unsigned", ".acp");
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const log = join(home, "audit.jsonl");
    writeFileSync(log, "");
    const init = await runCli(["init", "--json", "--no-passphrase"], { env: envFor(home, null) });
    expect(init.code).toBe(0);
    expect((JSON.parse(init.stdout) as { audit_moved_to: string | null }).audit_moved_to).toBeNull();
    expect(existsSync(log)).toBe(true);
  });
});
