import { describe, expect, it } from "vitest";
import {
  buildAuditEvent,
  createCheckpointBody,
  createCheckpointInput,
  MAX_AUDIT_LINE_LENGTH,
  parseAuditLine,
  serializeAuditEvent,
  signCheckpoint,
  verifyAuditChain,
} from "../../src/audit/index.js";
import { sampleChain, testKeys } from "./chain-fixture.js";

const keys = testKeys();
const other = testKeys();
const chain = sampleChain(12, 5, keys.privateKey); // lines 1-5 events, 6 checkpoint, 7-11, 12 checkpoint, 13-14, 15 checkpoint
const lines = chain.lines();
const hashOf = (line: number): string | null => chain.events[line - 1]?.event_hash ?? null;

/** A well-formed line (its own hash right) that names `previous`: what someone who can write the log plants. */
function planted(previous: string | null, tool = "forged"): string {
  return serializeAuditEvent(
    buildAuditEvent(
      { event_type: "tool_call_intercepted", tool },
      { id: "ae_planted", timestamp: "2026-01-15T13:00:00.000Z", previousEventHash: previous },
    ),
  );
}

describe("what verification tells after the first problem", () => {
  it("names a planted line consistent with the chain as inserted, not the genuine line after it, and reads on", () => {
    const edited = [...lines.slice(0, 8), planted(hashOf(8)), ...lines.slice(8)];
    const r = verifyAuditChain(edited, { publicKey: keys.publicKey });
    expect(r.ok).toBe(false);
    expect(r.problem).toMatchObject({ line: 9, code: "inserted", where: "log" });
    expect(r.problem?.message).toBe(
      "line 10 follows line 8, as line 9 does, and the log goes on from line 10: line 9 was inserted",
    );
    // the planted line is not counted intact
    expect(r).toMatchObject({ count: 8, head: hashOf(8), checkpoints: 1 });
    expect(r.afterProblem).toEqual({
      lines: 7,
      linked: 7,
      checkpoints: 2,
      signedCheckpoints: 2,
      lastSignedCheckpoint: { line: 16, count: 14, headHash: hashOf(14), timestamp: chain.events[14]?.timestamp },
      complete: true,
      anchor: null,
    });
  });

  it("looks for the anchor's checkpoint after the problem: found one line later, or not found (cut too)", () => {
    const anchor = lines.at(-1) ?? "";
    const inserted = [...lines.slice(0, 8), planted(hashOf(8)), ...lines.slice(8)];
    const r = verifyAuditChain(inserted, { publicKey: keys.publicKey, anchor });
    expect(r.problem).toMatchObject({ line: 9, code: "inserted" });
    expect(r.afterProblem?.anchor).toEqual({ expectedLine: 15, line: 16 });
    // the same, and the tail cut: the anchor's line is nowhere after the break
    const cut = verifyAuditChain(inserted.slice(0, 13), { publicKey: keys.publicKey, anchor });
    expect(cut.afterProblem?.anchor).toEqual({ expectedLine: 15, line: null });
    // the anchor's own line edited in place (its hash kept): found at the problem's line
    const edited = lines.map((l, i) => (i === 14 ? l.replace('"count":14', '"count":15') : l));
    const atProblem = verifyAuditChain(edited, { anchor });
    expect(atProblem.problem?.line).toBe(15);
    expect(atProblem.afterProblem?.anchor).toEqual({ expectedLine: 15, line: 15 });
    // an anchor the intact lines reached is not looked for again
    const late = verifyAuditChain([...lines.slice(0, 13), "{"], { anchor: lines[11] ?? "" });
    expect(late.afterProblem?.anchor).toBeNull();
  });

  it("names a line planted before the first one, and one planted right after a checkpoint", () => {
    const first = verifyAuditChain([planted(null), ...lines], { publicKey: keys.publicKey });
    expect(first.problem).toMatchObject({ line: 1, code: "inserted" });
    expect(first.problem?.message).toContain("line 2 follows the start of the log, as line 1 does");
    expect(first).toMatchObject({ count: 0, head: null });
    expect(first.afterProblem).toMatchObject({ lines: 15, linked: 15, signedCheckpoints: 3 });
    const afterCheckpoint = verifyAuditChain([...lines.slice(0, 6), planted(hashOf(6)), ...lines.slice(6)]);
    expect(afterCheckpoint.problem).toMatchObject({ line: 7, code: "inserted" });
    expect(afterCheckpoint).toMatchObject({ count: 6, checkpoints: 1, lastCheckpoint: { line: 6 } });
  });

  it("a planted line that forks off (the log does not go on from it) stays a broken link at its own line", () => {
    // line 3 replaced by a line that also follows line 2: line 4 names the genuine line 3, which is gone
    const edited = [...lines.slice(0, 2), planted(hashOf(2)), ...lines.slice(3)];
    const r = verifyAuditChain(edited, { publicKey: keys.publicKey });
    expect(r.problem).toMatchObject({ line: 4, code: "broken_link" });
    expect(r.count).toBe(3);
    expect(r.afterProblem).toMatchObject({ lines: 11, linked: 11, checkpoints: 3, signedCheckpoints: 3 });
  });

  it("an edited line hides nothing after it: the rest is read, linked and its checkpoints checked", () => {
    const edited = lines.map((l, i) => (i === 2 ? l.replace('"send_email"', '"send_money"') : l));
    const r = verifyAuditChain(edited, { publicKey: keys.publicKey });
    expect(r.problem).toMatchObject({ line: 3, code: "hash_mismatch" });
    expect(r.afterProblem).toMatchObject({ lines: 12, linked: 12, checkpoints: 3, signedCheckpoints: 3 });
    expect(r.afterProblem?.lastSignedCheckpoint?.line).toBe(15);
    // without a key, signatures are not counted
    expect(verifyAuditChain(edited).afterProblem).toMatchObject({
      signedCheckpoints: null,
      lastSignedCheckpoint: null,
    });
  });

  it("counts later damage and checkpoints signed with another key", () => {
    const body = createCheckpointBody(hashOf(13), 13, "2026-01-15T13:00:00.000Z");
    const forged = serializeAuditEvent(
      buildAuditEvent(createCheckpointInput({ body, signature: signCheckpoint(body, other.privateKey) }), {
        id: "ae_forged_cp",
        timestamp: "2026-01-15T13:00:00.000Z",
        previousEventHash: hashOf(13),
      }),
    );
    const edited = [...lines.slice(0, 4), "{not json", ...lines.slice(5, 13), forged];
    const r = verifyAuditChain(edited, { publicKey: keys.publicKey });
    expect(r.problem).toMatchObject({ line: 5, code: "not_json" });
    // line 6 names line 5, which did not parse: not linked; lines 7-14 are
    expect(r.afterProblem).toMatchObject({ lines: 9, linked: 8, checkpoints: 3, signedCheckpoints: 2 });
    expect(r.afterProblem?.lastSignedCheckpoint?.line).toBe(12);
  });

  it("does not read on past a line too long to read (its end may never come)", () => {
    const r = verifyAuditChain([lines[0] ?? "", "x".repeat(MAX_AUDIT_LINE_LENGTH + 1), ...lines.slice(1)]);
    expect(r.problem).toMatchObject({ line: 2, code: "not_json" });
    expect(r.afterProblem).toMatchObject({ lines: 0, complete: false });
    const later = verifyAuditChain([...lines.slice(0, 3), "{", lines[4] ?? "", "x".repeat(MAX_AUDIT_LINE_LENGTH + 1)]);
    expect(later.afterProblem).toMatchObject({ lines: 2, complete: false });
  });

  it("reads every line of the log when the anchor itself is bad, so a broken anchor hides nothing", () => {
    const edited = lines.map((l, i) => (i === 9 ? l.replace('"send_email"', '"send_money"') : l));
    const r = verifyAuditChain(edited, { anchor: "{", publicKey: keys.publicKey });
    expect(r.problem).toMatchObject({ line: 0, where: "anchor", code: "not_json" });
    expect(r.count).toBe(0);
    // line 10 does not hash to itself: not linked, the others are
    expect(r.afterProblem).toMatchObject({ lines: 15, linked: 14, checkpoints: 3, signedCheckpoints: 3 });
  });

  it("is null when the log is intact, and when the log ends before the anchor", () => {
    expect(verifyAuditChain(lines).afterProblem).toBeNull();
    const anchor = lines.at(-1) ?? "";
    expect(parseAuditLine(anchor).ok).toBe(true);
    const cut = verifyAuditChain(lines.slice(0, 13), { anchor });
    expect(cut.problem?.code).toBe("truncated_after_checkpoint");
    expect(cut.afterProblem).toBeNull();
  });
});
