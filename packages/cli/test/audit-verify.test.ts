import { execFileSync, spawn } from "node:child_process";
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildAuditEvent, serializeAuditEvent } from "@acp/core";
import { openAuditLog } from "@acp/store";
import { runCli } from "./run.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A home with keys/public.key and an audit log of `n` events with checkpoints. */
async function home(
  n: number,
): Promise<{ home: string; log: string; env: Record<string, string>; privateKey: KeyObject }> {
  const dir = mkdtempSync(join(tmpdir(), "acp-cli-audit-"));
  dirs.push(dir);
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  mkdirSync(join(dir, "keys"));
  const x = publicKey.export({ format: "jwk" }).x ?? "";
  writeFileSync(join(dir, "keys", "public.key"), `${Buffer.from(x, "base64url").toString("hex")}\n`);
  const log = join(dir, "audit.jsonl");
  let t = Date.UTC(2026, 0, 15);
  const writer = await openAuditLog(log, { clock: () => new Date(t++), signer: privateKey, checkpointEvery: 3 });
  for (let i = 0; i < n; i++)
    await writer.append({ event_type: "policy_evaluated", tool: "send_email", decision: "ask" });
  await writer.close();
  return { home: dir, log, env: { ACP_HOME: dir, HOME: "/nonexistent-home" }, privateKey };
}

describe("acp audit verify", () => {
  it("exits 0 on an intact log and prints count, head and last checkpoint", async () => {
    const h = await home(5);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/intact: 7 events, head sha256:[0-9a-f]{64}/);
    expect(out.stdout).toContain("last checkpoint: line 7 (6 events");
    expect(out.stderr).toBe("");
  });

  it("exits 3 naming the first bad line and what is wrong", async () => {
    const h = await home(5);
    const lines = readFileSync(h.log, "utf8").split("\n");
    lines[2] = (lines[2] ?? "").replace('"decision":"ask"', '"decision":"accept"');
    writeFileSync(h.log, lines.join("\n"));
    const out = await runCli(["audit", "verify", h.log], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain(`${h.log}:3: hash_mismatch:`);
  });

  it("names a planted line that is consistent with the chain, and still tells what follows it, never intact", async () => {
    const h = await home(5);
    const lines = readFileSync(h.log, "utf8").trimEnd().split("\n");
    const head = (JSON.parse(lines[4] ?? "") as { event_hash: string }).event_hash;
    const plant = serializeAuditEvent(
      buildAuditEvent(
        { event_type: "policy_evaluated", tool: "send_email", decision: "accept" },
        { id: "ae_planted", timestamp: "2026-01-15T00:00:00.004Z", previousEventHash: head },
      ),
    );
    writeFileSync(h.log, `${[...lines.slice(0, 5), plant, ...lines.slice(5)].join("\n")}\n`);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stderr.split("\n")).toEqual([
      `${h.log}:6: inserted: line 7 follows line 5, as line 6 does, and the log goes on from line 7: line 6 was inserted`,
      "5 lines before it are intact",
      "after it: 2 more lines, 2 linked to the line before",
      "1 later checkpoints, 1 signed with the key (the last at line 8, for 6 events by its own account)",
      "the anchor's checkpoint (line 7 by its own count) is at line 8: lines were inserted or removed before it",
      "the log is not intact: lines after a break are vouched for by their own content only",
      "",
    ]);
    const json = await runCli(["audit", "verify", "--json"], { env: h.env });
    expect(json.code).toBe(3);
    const v = JSON.parse(json.stdout) as Record<string, unknown>;
    // version 3: every field of versions 1 and 2 as it was, what follows the problem, and `valid`
    expect(v).toMatchObject({
      output_version: 6,
      file: h.log,
      valid: false,
      ok: false,
      count: 5,
      checkpoints: 1,
      problem: { line: 6, code: "inserted", where: "log" },
      afterProblem: { lines: 2, linked: 2, checkpoints: 1, signedCheckpoints: 1, complete: true },
    });
    for (const key of ["public_key_file", "public_key", "anchor_file", "anchor_line", "head", "lastCheckpoint"])
      expect(v).toHaveProperty(key);
  });

  it("refuses a named pipe planted as the home's log instead of waiting on it for ever (exit 1)", async () => {
    const h = await home(1);
    rmSync(h.log);
    execFileSync("mkfifo", [h.log]);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`cannot read audit log \`${h.log}\`: not a regular file`);
  });

  it("verifies a log a person pipes in (FILE /dev/stdin, or <(…)): intact, and a reordered one named as before", async () => {
    const h = await home(5);
    const ACP = fileURLToPath(new URL("../bin/acp.js", import.meta.url));
    // through a real pipe (a child's stdio from node is a socket, which /dev/stdin cannot open)
    const piped = (text: string): Promise<{ code: number | null; stdout: string; stderr: string }> => {
      const copy = join(h.home, "piped.jsonl");
      writeFileSync(copy, text);
      const script = 'cat "$1" | "$2" "$3" audit verify /dev/stdin --anchor "$4"';
      return new Promise((resolve) => {
        const child = spawn("sh", ["-c", script, "sh", copy, process.execPath, ACP, `${h.log}.checkpoint`], {
          env: { PATH: process.env["PATH"] ?? "", ...h.env },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.once("close", (code) => resolve({ code, stdout, stderr }));
      });
    };
    const text = readFileSync(h.log, "utf8");
    const intact = await piped(text);
    expect(intact.stderr).toBe("");
    expect(intact).toMatchObject({ code: 0 });
    expect(intact.stdout).toMatch(/^\/dev\/stdin: intact: 7 events/);
    expect(intact.stdout).toContain("anchor: the log reaches the anchor's checkpoint (line 7)");
    // a pipe cannot be read twice: the line a moved line names is found among the hashes seen (the last 8,192)
    const lines = text.trimEnd().split("\n");
    const swapped = [lines[0], lines[2], lines[1], ...lines.slice(3)].join("\n") + "\n";
    const reordered = await piped(swapped);
    expect(reordered.code).toBe(3);
    expect(reordered.stderr).toMatch(/^\/dev\/stdin:2: reordered: /);
  });

  it("refuses the home's public key when others can change it, not a key a person names (exit 1)", async () => {
    const h = await home(2);
    const key = join(h.home, "keys", "public.key");
    chmodSync(key, 0o666);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`\`${key}\` is writable by others (mode 0666)`);
    expect(out.stderr).toContain(`run \`chmod go-w ${key}\``);
    expect((await runCli(["audit", "verify", "--public-key", key], { env: h.env })).code).toBe(0);
  });

  it("hints at an interrupted write when the bad line is a last line without newline, and only then", async () => {
    const h = await home(5);
    const text = readFileSync(h.log, "utf8");
    writeFileSync(h.log, `${text}{"type":"audit_ev`);
    const torn = await runCli(["audit", "verify", h.log], { env: h.env });
    expect(torn.code).toBe(3);
    expect(torn.stderr).toContain(`${h.log}:8: not_json:`);
    expect(torn.stderr).toContain("hint: the last line has no newline");
    writeFileSync(h.log, `${text}{"type":"audit_ev\n`);
    const whole = await runCli(["audit", "verify", h.log], { env: h.env });
    expect(whole.stderr).toContain(`${h.log}:8: not_json:`);
    expect(whole.stderr).not.toContain("hint:");
  });

  it("detects a log cut after a checkpoint through the anchor beside it", async () => {
    const h = await home(5);
    const lines = readFileSync(h.log, "utf8").split("\n");
    writeFileSync(h.log, `${lines.slice(0, 4).join("\n")}\n`);
    const out = await runCli(["audit", "verify", "--json"], { env: h.env });
    expect(out.code).toBe(3);
    const json = JSON.parse(out.stdout) as { problem: { code: string; line: number } };
    expect(json.problem).toMatchObject({ code: "truncated_after_checkpoint", line: 5 });
  });

  it("exits 3 on a checkpoint signed by another key", async () => {
    const h = await home(4);
    const other = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }).x ?? "";
    const keyFile = join(h.home, "other.key");
    writeFileSync(keyFile, Buffer.from(other, "base64url").toString("hex"));
    const out = await runCli(["audit", "verify", "--public-key", keyFile], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stderr).toMatch(/bad_checkpoint_signature/);
  });

  it("reports a missing file as an error and a malformed key as invalid input", async () => {
    const h = await home(1);
    expect((await runCli(["audit", "verify", join(h.home, "nope.jsonl")], { env: h.env })).code).toBe(1);
    const missing = await runCli(["audit", "verify", join(h.home, "nope.jsonl"), "--public-key", "bad.key"], {
      env: h.env,
    });
    expect(missing.stderr).toContain("no such file");
    const dir = await runCli(["audit", "verify", h.home], { env: h.env });
    expect(dir.code).toBe(1);
    expect(dir.stderr).toContain(`cannot read audit log \`${h.home}\`: not a file`);
    const bad = join(h.home, "bad.key");
    writeFileSync(bad, "not hex");
    const out = await runCli(["audit", "verify", "--public-key", bad], { env: h.env });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("public key is not 64 hex digits");
  });

  it("warns when there is no public key to check signatures with", async () => {
    const h = await home(1);
    rmSync(join(h.home, "keys", "public.key"));
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("checkpoint signatures not checked");
  });

  it("shows control characters the log holds as escapes in the problem it prints", async () => {
    const h = await home(1);
    const event = { type: "audit_event", version: "0.2.0", id: "ae_1", timestamp: "2026-01-15T00:00:00Z" };
    writeFileSync(h.log, `${JSON.stringify({ ...event, event_type: "\u001b[2J\u001b[32mintact" })}\n`);
    const out = await runCli(["audit", "verify", h.log], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stderr).not.toContain("\u001b");
    expect(out.stderr).toContain("unknown `event_type` `\\u001b[2J\\u001b[32mintact`");
  });

  it("refuses a checkpoint whose timestamp is not ISO-8601 (control characters), printing none of them: without a key nothing vouches for it", async () => {
    const h = await home(1);
    rmSync(join(h.home, "keys", "public.key"));
    rmSync(`${h.log}.checkpoint`);
    // a log someone wrote whole, no key needed: one event and a checkpoint whose (unchecked) timestamp
    // clears the screen, sets the window title and turns what follows right to left
    const first = buildAuditEvent(
      { event_type: "policy_evaluated", tool: "send_email", decision: "ask" },
      { id: "ae_1", timestamp: "2026-01-15T00:00:00.000Z", previousEventHash: null },
    );
    const hostile = "\u001b[2J\u001b]0;ok\u0007\u009b31m\u202eintact";
    const checkpoint = buildAuditEvent(
      {
        event_type: "checkpoint",
        metadata: {
          checkpoint: { type: "audit_checkpoint", head_hash: first.event_hash, count: 1, timestamp: hostile },
          signature: "0".repeat(128),
        },
      },
      { id: "ae_2", timestamp: "2026-01-15T00:00:00.001Z", previousEventHash: first.event_hash },
    );
    writeFileSync(h.log, `${serializeAuditEvent(first)}\n${serializeAuditEvent(checkpoint)}\n`);
    const out = await runCli(["audit", "verify"], { env: h.env });
    // before 28 Nov 2026 any string was read: exit 0, the timestamp printed (escaped) as the last checkpoint's
    expect(out.code).toBe(3);
    expect(`${out.stdout}${out.stderr}`).toContain("`metadata.checkpoint.timestamp` is not an ISO-8601 date-time");
    expect(`${out.stdout}${out.stderr}`).toContain("schema_invalid");
    // nothing the terminal acts on (C0 but the newlines, DEL, C1, the bidi override) is printed raw
    const raw = [...out.stdout, ...out.stderr].filter((c) => /[\p{Cc}\u202e]/u.test(c) && c !== "\n");
    expect(raw).toEqual([]);
  });

  it("names the key it checked signatures with, in full, and says when it is the home's own (which a forger can replace)", async () => {
    const h = await home(2);
    const homeKey = readFileSync(join(h.home, "keys", "public.key"), "utf8").trim();
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(
      `signatures: checked with ${homeKey} (\`${join(h.home, "keys", "public.key")}\`, the home's own key`,
    );
    const copy = join(h.home, "kept-elsewhere.key");
    writeFileSync(copy, homeKey);
    const named = await runCli(["audit", "verify", "--public-key", copy, "--json"], { env: h.env });
    expect(JSON.parse(named.stdout)).toMatchObject({ ok: true, public_key: homeKey, public_key_file: copy });
    const text = await runCli(["audit", "verify", "--public-key", copy], { env: h.env });
    expect(text.stdout).toContain(`signatures: checked with ${homeKey} (\`${copy}\`)`);
  });

  it("a home whose log was deleted but whose anchor remains is a cut log (exit 3), not a home with nothing audited yet", async () => {
    const h = await home(5);
    rmSync(h.log);
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain(`${h.log}:1: truncated_after_checkpoint: log ends at line 0`);
    expect(out.stderr).toContain("does not exist but its anchor does: the log was deleted or moved");
    const json = await runCli(["audit", "verify", "--json"], { env: h.env });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, problem: { code: "truncated_after_checkpoint" } });
    rmSync(`${h.log}.checkpoint`);
    // its marker still says it had an anchor: deleted with the log (before 28 Nov 2026: "no audit log yet", exit 1)
    const both = await runCli(["audit", "verify"], { env: h.env });
    expect(both.code).toBe(3);
    expect(both.stderr).toContain(`${h.log}.checkpoint: anchor_missing:`);
    expect(both.stderr).toContain(`its marker \`${h.log}.anchored\` does: the log was deleted or moved`);
    rmSync(`${h.log}.anchored`);
    const none = await runCli(["audit", "verify"], { env: h.env });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no audit log yet");
  });

  it("says what the anchor proves: that the log reaches its line, and warns when it is older than the last checkpoint", async () => {
    const h = await home(5); // checkpoints at lines 4 and 7
    const ok = await runCli(["audit", "verify"], { env: h.env });
    expect(ok.stdout).toContain("anchor: the log reaches the anchor's checkpoint (line 7)");
    expect(ok.stderr).toBe("");
    const lines = readFileSync(h.log, "utf8").split("\n");
    writeFileSync(`${h.log}.checkpoint`, `${lines[3]}\n`); // an older anchor (put back, or its update lost)
    const stale = await runCli(["audit", "verify", "--json"], { env: h.env });
    expect(JSON.parse(stale.stdout)).toMatchObject({ ok: true, anchor_line: 4, lastCheckpoint: { line: 7 } });
    const text = await runCli(["audit", "verify"], { env: h.env });
    expect(text.code).toBe(0);
    expect(text.stderr).toContain(
      "warning: the anchor records the checkpoint at line 4, older than the last one (line 7): a cut after line 4 cannot be detected",
    );
    expect(text.stdout).not.toContain("anchor: the log reaches");
  });

  it("warns that a copy holding signed checkpoints has no anchor beside it (no marker), still exit 0", async () => {
    const h = await home(5); // checkpoints at lines 4 and 7
    rmSync(`${h.log}.checkpoint`);
    rmSync(`${h.log}.anchored`); // moved or copied without its anchor (nor the marker that it had one)
    const out = await runCli(["audit", "verify", h.log], { env: h.env });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain(
      `warning: no checkpoint anchor beside the log (\`${h.log}.checkpoint\` missing) though it holds 2 signed checkpoints`,
    );
    expect(out.stderr).toContain("a cut or rewrite after the last checkpoint (line 7) cannot be detected");
    // the next writer verifies the log and anchors it at that checkpoint: the warning is gone
    const writer = await openAuditLog(h.log, { clock: () => new Date(Date.UTC(2026, 0, 16)), signer: h.privateKey });
    expect(writer.reanchored).toEqual({ line: 7, linesAfter: 0 });
    await writer.close();
    const after = await runCli(["audit", "verify"], { env: h.env });
    expect(after.stderr).toBe("");
    expect(after.stdout).toContain("anchor: the log reaches the anchor's checkpoint (line 7)");
  });

  it("a bad anchor says the log was not verified, not that 0 lines of it are intact", async () => {
    const h = await home(2);
    const anchor = readFileSync(`${h.log}.checkpoint`, "utf8");
    writeFileSync(
      `${h.log}.checkpoint`,
      anchor.replace(/"event_hash":"sha256:[0-9a-f]{8}/, '"event_hash":"sha256:00000000'),
    );
    const out = await runCli(["audit", "verify"], { env: h.env });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain(
      `${h.log}.checkpoint: hash_mismatch: anchor's \`event_hash\` does not match its content`,
    );
    expect(out.stderr).toContain("the log was not verified against it: the anchor is checked first");
    expect(out.stderr).not.toContain("lines before it are intact");
    // the log is read all the same: 2 events and the checkpoint at close, every line linked, it signed
    expect(out.stderr).toContain(
      "the log: 3 lines, 3 linked to the line before\n1 checkpoints, 1 signed with the key (the last at line 3, for 2 events",
    );
    expect(out.stderr).toContain("the log is not intact: without a good anchor");
  });
});
