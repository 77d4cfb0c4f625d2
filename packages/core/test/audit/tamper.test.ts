import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  buildAuditEvent,
  createCheckpointBody,
  createCheckpointInput,
  serializeAuditEvent,
  signCheckpoint,
  verifyAuditChain,
  type AuditEventV02,
} from "../../src/audit/index.js";
import { sampleChain, testKeys } from "./chain-fixture.js";

const keys = testKeys();
const chain = sampleChain(12, 5, keys.privateKey); // lines 1-5 events, 6 checkpoint, 7-11, 12 checkpoint, 13-14, 15 checkpoint
const lines = chain.lines();
const text = `${lines.join("\n")}\n`;

function verifyText(file: string, anchor?: string) {
  const split = file.split("\n");
  if (split.at(-1) === "") split.pop();
  return verifyAuditChain(
    split,
    anchor === undefined ? { publicKey: keys.publicKey } : { publicKey: keys.publicKey, anchor },
  );
}

/** Rebuilds a chain from (edited) event inputs so every hash and link is consistent again. */
function rehash(events: readonly AuditEventV02[]): AuditEventV02[] {
  const out: AuditEventV02[] = [];
  for (const e of events) {
    const input = { ...e, previous_event_hash: undefined, event_hash: undefined };
    out.push(
      buildAuditEvent(input, { id: e.id, timestamp: e.timestamp, previousEventHash: out.at(-1)?.event_hash ?? null }),
    );
  }
  return out;
}

describe("tampering with the audit log", () => {
  it("the untouched fixture verifies", () => {
    expect(verifyText(text).ok).toBe(true);
    expect(lines).toHaveLength(15);
  });

  it("any single-byte change to any line is detected at or before that line", () => {
    const bytes = Buffer.from(text, "utf8");
    const lineOf = (offset: number): number => bytes.subarray(0, offset).toString("utf8").split("\n").length;
    fc.assert(
      fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), (offset, delta) => {
        const copy = Buffer.from(bytes);
        copy[offset] = ((copy[offset] ?? 0) + delta) % 256;
        const result = verifyText(copy.toString("utf8"));
        expect(result.ok).toBe(false);
        expect(result.problem?.line).toBeLessThanOrEqual(lineOf(offset) + 1);
      }),
      { numRuns: 2000 },
    );
  });

  it("a deleted middle line is a broken link at that line", () => {
    const edited = [...lines.slice(0, 3), ...lines.slice(4)];
    const result = verifyAuditChain(edited);
    expect(result.problem).toMatchObject({ line: 4, code: "broken_link" });
    expect(result.count).toBe(3);
  });

  it("two swapped lines are reported as reordered", () => {
    const edited = [...lines];
    [edited[7], edited[8]] = [lines[8] ?? "", lines[7] ?? ""];
    expect(verifyAuditChain(edited).problem).toMatchObject({ line: 8, code: "reordered" });
  });

  it("a duplicated line is reported as reordered", () => {
    const edited = [...lines.slice(0, 3), lines[1] ?? "", ...lines.slice(3)];
    expect(verifyAuditChain(edited).problem).toMatchObject({ line: 4, code: "reordered" });
  });

  it("a log truncated after a checkpoint is caught by the checkpoint kept beside it", () => {
    const anchor = lines.at(-1) ?? "";
    const truncated = `${lines.slice(0, 6).join("\n")}\n`;
    const result = verifyText(truncated, anchor);
    expect(result.problem).toMatchObject({ line: 7, code: "truncated_after_checkpoint" });
    expect(result.lastCheckpoint).toMatchObject({ line: 6 });
    expect(verifyText(text, anchor).ok).toBe(true);
  });

  it("a log rewritten before the anchor's place is a checkpoint mismatch", () => {
    const anchor = lines[5] ?? "";
    const events = rehash(chain.events.map((e, i) => (i === 2 ? { ...e, tool: "delete_repo" } : e)));
    const result = verifyAuditChain(events.map(serializeAuditEvent), { anchor });
    expect(result.problem).toMatchObject({ line: 6, code: "checkpoint_mismatch" });
  });

  it("a genuine anchor whose event_hash was repointed at a rewritten log's line does not vouch for it", () => {
    // the forger has no key: the whole log is rewritten with no checkpoint, and the real signed anchor
    // (count 14) is kept with its `event_hash` replaced by that of the forged line 15
    const genuine = JSON.parse(lines.at(-1) ?? "") as AuditEventV02;
    const forged = rehash(
      Array.from({ length: lines.length }, (_, i) => ({ ...(chain.events[0] as AuditEventV02), id: `ae_f${i}` })),
    );
    const anchor = JSON.stringify({ ...genuine, event_hash: forged.at(-1)?.event_hash });
    const result = verifyAuditChain(forged.map(serializeAuditEvent), { publicKey: keys.publicKey, anchor });
    expect(result.ok).toBe(false);
    expect(result.problem).toMatchObject({ where: "anchor", code: "hash_mismatch", line: 15 });
    // the genuine anchor, in another byte form (prettified, as a person might keep a copy), still verifies
    const pretty = JSON.stringify(genuine, null, 2);
    expect(verifyAuditChain(lines, { publicKey: keys.publicKey, anchor: pretty }).ok).toBe(true);
  });

  it("a rewritten log with re-signed checkpoints fails on the first forged signature", () => {
    const forger = testKeys();
    const events = rehash(chain.events.slice(0, 5).map((e, i) => (i === 2 ? { ...e, decision: "accept" } : e)));
    const body = createCheckpointBody(events.at(-1)?.event_hash ?? null, 5, "2026-01-15T12:00:01.000Z");
    const forged = buildAuditEvent(
      createCheckpointInput({ body, signature: signCheckpoint(body, forger.privateKey) }),
      {
        id: "ae_forged",
        timestamp: body.timestamp,
        previousEventHash: body.head_hash,
      },
    );
    const result = verifyAuditChain([...events, forged].map(serializeAuditEvent), { publicKey: keys.publicHex });
    expect(result.problem).toMatchObject({ line: 6, code: "bad_checkpoint_signature" });
    expect(verifyAuditChain([...events, forged].map(serializeAuditEvent)).ok).toBe(true);
  });

  it("a checkpoint whose count does not match its place is a checkpoint mismatch", () => {
    const events = [...chain.events.slice(0, 5)];
    const body = createCheckpointBody(events.at(-1)?.event_hash ?? null, 4, "2026-01-15T12:00:01.000Z");
    events.push(
      buildAuditEvent(createCheckpointInput({ body, signature: signCheckpoint(body, keys.privateKey) }), {
        id: "ae_cp",
        timestamp: body.timestamp,
        previousEventHash: body.head_hash,
      }),
    );
    const result = verifyAuditChain(events.map(serializeAuditEvent), { publicKey: keys.publicKey });
    expect(result.problem).toMatchObject({ line: 6, code: "checkpoint_mismatch" });
  });

  it("an edited field is a hash mismatch; an upper-case hash and an unknown field are schema errors", () => {
    const edited = [...lines];
    edited[2] = (lines[2] ?? "").replace('"send_email"', '"send_money"');
    expect(verifyAuditChain(edited).problem).toMatchObject({ line: 3, code: "hash_mismatch" });
    const upper = [...lines];
    const hash = chain.events[0]?.event_hash ?? "";
    upper[0] = (lines[0] ?? "").replace(hash, hash.toUpperCase().replace("SHA256:", "sha256:"));
    expect(verifyAuditChain(upper).problem).toMatchObject({ line: 1, code: "schema_invalid" });
    const extra = [(lines[0] ?? "").replace('{"agent"', '{"admin":true,"agent"')];
    expect(verifyAuditChain(extra).problem).toMatchObject({ line: 1, code: "schema_invalid" });
  });

  it("a line that is not JSON or not canonical is named", () => {
    expect(verifyAuditChain([lines[0] ?? "", "{not json"]).problem).toMatchObject({ line: 2, code: "not_json" });
    expect(verifyAuditChain(["[1,2]"]).problem).toMatchObject({ line: 1, code: "not_json" });
    const spaced = (lines[0] ?? "").replace('"agent":', '"agent": ');
    expect(verifyAuditChain([spaced]).problem).toMatchObject({ line: 1, code: "not_canonical" });
  });

  it("a bad anchor is reported as a problem of the anchor, not of the log", () => {
    const result = verifyAuditChain(lines, { anchor: "garbage" });
    expect(result.problem).toMatchObject({ where: "anchor", code: "not_json" });
    const notCheckpoint = verifyAuditChain(lines, { anchor: lines[0] ?? "" });
    expect(notCheckpoint.problem).toMatchObject({ where: "anchor", code: "schema_invalid" });
  });
});
