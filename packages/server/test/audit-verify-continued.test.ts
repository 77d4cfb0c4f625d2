/**
 * The service verifies the audit file (`GET /v1/audit/verify`, the console's audit page) by continuing
 * from where the last verification ended: only appended lines are read, a rewritten or cut file is
 * verified whole again, and a whole verification still runs now and then for edits in place.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AuditVerification } from "@acp/core";
import { openAuditLog, readAnchor, verifyAuditFile, type AuditLog } from "@acp/store";
import { createFileAuditTrail } from "../src/store/file-audit-trail.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const { privateKey, publicKey } = generateKeyPairSync("ed25519");

async function append(log: AuditLog, n: number, tag: string): Promise<void> {
  for (let i = 0; i < n; i++) await log.append({ event_type: "policy_evaluated", tool: `tool_${tag}_${i % 10}` });
}

/** What verifying the whole file from scratch gives. */
async function fresh(path: string): Promise<AuditVerification> {
  const anchor = readAnchor(path);
  return (await verifyAuditFile(path, { publicKey, ...(anchor !== undefined ? { anchor } : {}) })).verification;
}

async function setup(): Promise<{ path: string; log: AuditLog; clock: { ms: number } }> {
  const dir = mkdtempSync(join(tmpdir(), "acp-audit-continued-"));
  dirs.push(dir);
  const path = join(dir, "audit.jsonl");
  let t = Date.UTC(2026, 0, 15);
  const log = await openAuditLog(path, { clock: () => new Date(t++), signer: privateKey, checkpointEvery: 7 });
  return { path, log, clock: { ms: 0 } };
}

describe("the service's audit verification, continued", () => {
  it("reads only appended lines: an edit in place before them is found by the whole verification that runs every fullEveryMs", async () => {
    const { path, log, clock } = await setup();
    const trail = createFileAuditTrail(path, { publicKey, now: () => clock.ms, fullEveryMs: 60_000 });
    expect(await trail.verify()).toMatchObject({ ok: true, count: 0 });
    await append(log, 20, "a");
    const first = await trail.verify();
    expect(first).toEqual(await fresh(path));
    expect(first).toMatchObject({ ok: true, count: 22, checkpoints: 2 });
    // concurrent callers share one run
    const [x, y] = [trail.verify(), trail.verify()];
    expect(x).toBe(y);
    await x;

    // an old line edited in place, same length: the prefix is not read again...
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.replace('"tool_a_3"', '"tool_b_3"'));
    await append(log, 5, "c");
    const lineCount = readFileSync(path, "utf8").split("\n").length - 1;
    const continued = await trail.verify();
    expect(continued).toMatchObject({ ok: true, count: lineCount });
    expect((await fresh(path)).problem).toMatchObject({ line: 4, code: "hash_mismatch" });
    // ...until the whole verification is due: it runs in the background, the next call reports the problem
    clock.ms += 60_000;
    expect(await trail.verify()).toMatchObject({ ok: true, count: lineCount });
    await trail.idle();
    const found = await trail.verify();
    expect(found.problem).toMatchObject({ line: 4, code: "hash_mismatch" });
    expect(found).toEqual(await fresh(path));
    await log.close();
  });

  it("verifies the whole file again when an old line changed length, the file was cut or replaced", async () => {
    const { path, log, clock } = await setup();
    const trail = createFileAuditTrail(path, { publicKey, now: () => clock.ms });
    await append(log, 30, "a");
    expect(await trail.verify()).toMatchObject({ ok: true, count: 34 });
    await append(log, 3, "b");
    expect(await trail.verify()).toEqual(await fresh(path));
    await log.close();
    const text = readFileSync(path, "utf8");

    // an old event edited, its line one byte longer: the remembered last line is no longer at its place
    writeFileSync(path, text.replace('"tool_a_3"', '"tool_a_33"'));
    const edited = await trail.verify();
    expect(edited.problem).toMatchObject({ line: 4, code: "hash_mismatch" });
    expect(edited).toEqual(await fresh(path));

    // intact again, then cut after a checkpoint (the anchor beside it names a line past the end)
    writeFileSync(path, text);
    expect(await trail.verify()).toMatchObject({ ok: true, count: 38 });
    const lines = text.split("\n");
    writeFileSync(path, `${lines.slice(0, 10).join("\n")}\n`);
    const cut = await trail.verify();
    expect(cut.problem).toMatchObject({ code: "truncated_after_checkpoint" });
    expect(cut).toEqual(await fresh(path));

    // the last line moved before it (same length and bytes, another place): not continued, reordered
    writeFileSync(path, text);
    expect(await trail.verify()).toMatchObject({ ok: true, count: 38 });
    const moved = [...lines.slice(0, 36), lines[37], lines[36], ""];
    writeFileSync(path, moved.join("\n"));
    const swapped = await trail.verify();
    expect(swapped).toEqual(await fresh(path));
    expect(swapped.problem).toMatchObject({ line: 37, code: "reordered" });
  });

  it("answers an empty log, and a missing one, as empty", async () => {
    const { path, log } = await setup();
    await log.close();
    rmSync(path);
    const trail = createFileAuditTrail(path, { publicKey });
    expect(await trail.verify()).toMatchObject({ ok: true, count: 0, head: null });
    writeFileSync(path, "");
    expect(await trail.verify()).toMatchObject({ ok: true, count: 0, head: null });
  });

  it("fails anchor_missing once the anchor is deleted while the log's marker says it had one, as acp audit verify does", async () => {
    const { path, log, clock } = await setup();
    await append(log, 8, "a");
    await log.close();
    const trail = createFileAuditTrail(path, { publicKey, now: () => clock.ms, fullEveryMs: 60_000 });
    expect(await trail.verify()).toMatchObject({ ok: true, count: 10, checkpoints: 2 });
    // cut back to the first checkpoint (line 8) and the anchor deleted: the rest verifies line by line
    const lines = readFileSync(path, "utf8").split("\n");
    writeFileSync(path, `${lines.slice(0, 8).join("\n")}\n`);
    rmSync(`${path}.checkpoint`);
    clock.ms += 120_000;
    // before 28 Nov 2026: ok, count 8
    expect(await trail.verify()).toMatchObject({ ok: false, count: 8, problem: { code: "anchor_missing" } });
  });
});
