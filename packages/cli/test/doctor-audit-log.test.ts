/**
 * `acp doctor` checks the home's file audit log against its anchor (`audit.jsonl.checkpoint`), as acp proxy
 * and acp run do before they extend it: a log that no longer holds the anchor's checkpoint at its line
 * fails; a log with signed checkpoints and no anchor is a warning naming the file. Before, doctor did not
 * look at the file log at all. A log whose checkpoints another key signed (an acp proxy run before acp
 * init, a key replaced by acp init --force) fails, naming that and what to do; before, it was "ok".
 */
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("doctor-audit-log");
afterAll(root.cleanup);

interface Check {
  status: string;
  name: string;
  detail: string;
}

async function auditCheck(home: string): Promise<{ code: number; check: Check | undefined; names: string[] }> {
  const r = await runCli(["doctor", "--json"], { env: envFor(home) });
  const checks = (JSON.parse(r.stdout) as { checks: Check[] }).checks;
  return { code: r.code, check: checks.find((c) => c.name === "audit log"), names: checks.map((c) => c.name) };
}

/**
 * A log of 3 events and its closing checkpoint (line 4), signed with `signer` (a key of its own unless
 * given: the home's), with its anchor beside it.
 */
async function signedLog(
  home: string,
  privateKey: KeyObject = generateKeyPairSync("ed25519").privateKey,
): Promise<string> {
  const path = join(home, "audit.jsonl");
  const log = await openAuditLog(path, { clock: () => new Date(), signer: privateKey });
  for (let i = 0; i < 3; i++) await log.append({ event_type: "policy_evaluated", tool: "t", decision: "accept" });
  await log.close();
  return path;
}

describe("acp doctor: the file audit log's anchor", () => {
  it("is ok with no log yet, and with a log that holds its anchor's checkpoint at its line", async () => {
    const { home, key } = fixtureHome(root.dir);
    const none = await auditCheck(home);
    expect(none.check).toEqual({
      status: "ok",
      name: "audit log",
      detail: "no audit.jsonl yet (the first audited command starts it)",
    });
    expect(none.names.at(-1)).toBe("isolation");
    await signedLog(home, key.privateKey);
    const held = await auditCheck(home);
    expect(held.code).toBe(0);
    expect(held.check).toEqual({
      status: "ok",
      name: "audit log",
      detail: "audit.jsonl: its anchor's signed checkpoint is line 4",
    });
  });

  it("fails when the anchor is missing though the log's marker says it had one (deleted, perhaps with a cut)", async () => {
    const { home, key } = fixtureHome(root.dir);
    const path = await signedLog(home, key.privateKey);
    unlinkSync(`${path}.checkpoint`);
    const r = await auditCheck(home);
    expect(r.code).toBe(1);
    expect(r.check?.status).toBe("fail");
    expect(r.check?.detail).toContain(
      `${path}: its anchor audit.jsonl.checkpoint is missing, though audit.jsonl.anchored records that it had one`,
    );
    expect(r.check?.detail).toContain("acp audit verify fails it (anchor_missing)");
    unlinkSync(path); // the log gone too: the marker still tells
    expect((await auditCheck(home)).check?.status).toBe("fail");
  });

  it("warns, naming the file and what to do, when the log holds signed checkpoints and no anchor (nor marker)", async () => {
    const { home, key } = fixtureHome(root.dir);
    const path = await signedLog(home, key.privateKey);
    unlinkSync(`${path}.checkpoint`);
    unlinkSync(`${path}.anchored`); // moved or restored without them
    const r = await auditCheck(home);
    expect(r.code).toBe(0);
    expect(r.check?.status).toBe("warn");
    expect(r.check?.detail).toContain(
      `${path} holds signed checkpoints (the last at line 4) but no anchor beside it (audit.jsonl.checkpoint)`,
    );
    expect(r.check?.detail).toContain("check it with `acp audit verify`");
  });

  it("fails when the log was cut before its anchor's checkpoint, or that line was changed", async () => {
    const { home } = fixtureHome(root.dir);
    const path = await signedLog(home);
    const lines = readFileSync(path, "utf8").split("\n");
    writeFileSync(path, `${lines.slice(0, 3).join("\n")}\n`);
    const cut = await auditCheck(home);
    expect(cut.code).toBe(1);
    expect(cut.check?.status).toBe("fail");
    expect(cut.check?.detail).toContain(
      `${path} ends before line 4, its anchor's signed checkpoint (audit.jsonl.checkpoint)`,
    );
    expect(cut.check?.detail).toContain("audit_anchor_mismatch");

    writeFileSync(path, `${lines.slice(0, 3).join("\n")}\n${lines[3]?.replace('"count":3', '"count": 3')}\n`);
    const changed = await auditCheck(home);
    expect(changed.code).toBe(1);
    expect(changed.check?.detail).toContain(
      `${path}: line 4 is not the signed checkpoint of its anchor audit.jsonl.checkpoint`,
    );
    expect(changed.check?.detail).toContain("run `acp audit verify`");
  });

  it("fails a log whose checkpoints another key signed (made before acp init), with its anchor or without", async () => {
    const { home } = fixtureHome(root.dir);
    const path = await signedLog(home);
    const anchored = await auditCheck(home);
    expect(anchored.code).toBe(1);
    expect(anchored.check?.status).toBe("fail");
    expect(anchored.check?.detail).toContain(
      `${path}: its signed checkpoint at line 4 does not verify with this home's key (keys/public.key): it was signed with another key, before \`acp init\` made this one`,
    );
    expect(anchored.check?.detail).toContain(
      "acp audit verify refuses it and acp proxy and acp run extend it unchecked",
    );
    expect(anchored.check?.detail).toContain(
      "Move audit.jsonl, audit.jsonl.checkpoint and audit.jsonl.anchored aside together (to audit.jsonl.before-init-<time>",
    );
    // the audit command agrees: the log is not intact under the home's key
    expect((await runCli(["audit", "verify"], { env: envFor(home) })).code).toBe(3);

    unlinkSync(`${path}.checkpoint`);
    unlinkSync(`${path}.anchored`);
    const bare = await auditCheck(home);
    expect(bare.code).toBe(1);
    expect(bare.check?.detail).toContain("its signed checkpoint at line 4 does not verify with this home's key");
    expect(bare.check?.detail).toContain("acp proxy and acp run refuse it (audit_anchor_missing)");
  });

  it("fails an audit.jsonl that is a named pipe instead of waiting on it for ever", async () => {
    const { home } = fixtureHome(root.dir);
    execFileSync("mkfifo", [join(home, "audit.jsonl")]);
    const r = await auditCheck(home);
    expect(r.code).toBe(1);
    expect(r.check).toEqual({
      status: "fail",
      name: "audit log",
      detail: `${join(home, "audit.jsonl")} is not a regular file (a link, a pipe or a device)`,
    });
  });
});
