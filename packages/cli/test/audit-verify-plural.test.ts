/**
 * `acp audit verify` counts in words that agree with the number: "1 signature checked", "(1 event, …)";
 * before it printed "1 signatures checked" and "(1 events, …)". And the home's log made a symbolic link
 * is refused as the writers refuse it (`audit_log_unsafe`), not reported intact.
 */
import { mkdtempSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openAuditLog } from "@acp/store";
import { describeConsent } from "../src/commands/audit-verify.js";
import { runCli } from "./run.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A home with keys/public.key and an audit log of `n` events, then the closing checkpoint. */
async function home(n: number): Promise<{ home: string; log: string; env: Record<string, string> }> {
  const dir = mkdtempSync(join(tmpdir(), "acp-cli-audit-plural-"));
  dirs.push(dir);
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  mkdirSync(join(dir, "keys"));
  const x = publicKey.export({ format: "jwk" }).x ?? "";
  writeFileSync(join(dir, "keys", "public.key"), `${Buffer.from(x, "base64url").toString("hex")}\n`);
  const log = join(dir, "audit.jsonl");
  let t = Date.UTC(2026, 0, 15);
  const writer = await openAuditLog(log, { clock: () => new Date(t++), signer: privateKey, checkpointEvery: 1000 });
  for (let i = 0; i < n; i++) await writer.append({ event_type: "policy_evaluated", tool: "send_email" });
  await writer.close();
  return { home: dir, log, env: { ACP_HOME: dir, HOME: "/nonexistent-home" } };
}

describe("acp audit verify's counts", () => {
  it("one consent response is '1 signature checked'; more are 'signatures'", () => {
    const one = describeConsent({ checked: 1, unchecked: 0, notCheckable: [] });
    expect(one[0]).toBe("consent responses: 1 signature checked against the action recorded beside them");
    const two = describeConsent({ checked: 2, unchecked: 0, notCheckable: [] });
    expect(two[0]).toBe("consent responses: 2 signatures checked against the action recorded beside them");
  });

  it("a checkpoint over one event says '1 event'", async () => {
    const h = await home(1);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("intact: 2 events");
    expect(out.stdout).toContain("last checkpoint: line 2 (1 event, 2026-01-15T");
  });
});

describe("acp audit verify and the home's log made a symbolic link", () => {
  it("refuses it with audit_log_unsafe, as acp proxy and acp serve do; the target named as FILE verifies", async () => {
    const h = await home(3);
    const elsewhere = mkdtempSync(join(tmpdir(), "acp-cli-audit-target-"));
    dirs.push(elsewhere);
    const target = join(elsewhere, "real.jsonl");
    renameSync(h.log, target);
    renameSync(`${h.log}.checkpoint`, `${target}.checkpoint`);
    symlinkSync(target, h.log);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(1);
    expect(out.stdout).not.toContain("intact");
    expect(out.stderr).toContain(`\`${h.log}\` is a symbolic link`);
    expect(out.stderr).toContain("audit_log_unsafe");
    expect(out.stderr).toContain(`acp audit verify ${target}`);
    const named = await runCli(["audit", "verify", target], { env: h.env });
    expect(named.code).toBe(0);
    expect(named.stdout).toContain("intact: 4 events");
  });

  it("refuses a dangling link the same way (the writers refuse to create the log through it)", async () => {
    const h = await home(1);
    rmSync(h.log);
    rmSync(`${h.log}.checkpoint`);
    symlinkSync(join(h.home, "nowhere.jsonl"), h.log);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("audit_log_unsafe");
  });
});
