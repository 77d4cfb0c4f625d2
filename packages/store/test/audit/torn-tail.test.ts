import { randomBytes } from "node:crypto";
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sha256Ref } from "@acp/core";
import { openAuditLog } from "../../src/audit/index.js";
import { keyPair, readEvents, readLines, steppingClock, tempHomes, verifyFile } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);

describe("torn last line (power cut mid-write)", () => {
  it("is moved aside at open, recorded as audit_recovered, and the chain continues from the last good event", async () => {
    const keys = keyPair();
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey, checkpointEvery: 100 });
    await log.append({ event_type: "tool_call_intercepted", tool: "read_file" });
    const lastGood = await log.append({ event_type: "policy_evaluated", tool: "read_file", decision: "accept" });
    await log.flush();
    // a crash: no close, and half a line written after the last complete one
    const torn = '{"agent":"torn-agent","category":null,"decision":"acc';
    appendFileSync(path, torn);

    const reopened = await openAuditLog(path, { clock: steppingClock(Date.UTC(2026, 0, 16)), signer: keys.privateKey });
    expect(reopened.recovered).not.toBeNull();
    const next = await reopened.append({ event_type: "tool_call_intercepted", tool: "write_file" });
    await reopened.close();

    const events = readEvents(path);
    expect(events.map((e) => e.event_type)).toEqual([
      "tool_call_intercepted",
      "policy_evaluated",
      "audit_recovered",
      "tool_call_intercepted",
      "checkpoint",
    ]);
    const recovered = events[2];
    expect(recovered?.previous_event_hash).toBe(lastGood.event_hash);
    expect(recovered?.metadata).toMatchObject({
      reason: "torn_last_line",
      torn_bytes: torn.length,
      torn_sha256: sha256Ref(torn),
      after_line: 2,
      after_event_hash: lastGood.event_hash,
    });
    expect(next.previous_event_hash).toBe(recovered?.event_hash);
    const tornFiles = readdirSync(dirname(path)).filter((f) => f.startsWith("audit.jsonl.torn-"));
    expect(tornFiles).toEqual([recovered?.metadata["torn_file"]]);
    expect(readFileSync(join(dirname(path), tornFiles[0] ?? ""), "utf8")).toBe(torn);
    expect(readFileSync(path, "utf8")).not.toContain(torn);
    expect(verifyFile(path, keys.publicKey)).toMatchObject({ ok: true, count: 5 });
  });

  it("is caught by a writer already running when another process died mid-write", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock() });
    await log.append({ event_type: "tool_call_intercepted" });
    appendFileSync(path, '{"partial":');
    await log.append({ event_type: "tool_call_completed" });
    await log.close();
    expect(readEvents(path).map((e) => e.event_type)).toEqual([
      "tool_call_intercepted",
      "audit_recovered",
      "tool_call_completed",
    ]);
    expect(verifyFile(path).ok).toBe(true);
    expect(readLines(path).every((l) => l.startsWith('{"agent"'))).toBe(true);
  });

  it("leaves a log that ends with a complete line alone", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock() });
    await log.append({ event_type: "tool_call_intercepted" });
    await log.close();
    const again = await openAuditLog(path, { clock: steppingClock() });
    expect(again.recovered).toBeNull();
    await again.close();
    expect(readLines(path)).toHaveLength(1);
  });

  it("moves a torn tail of several megabytes aside whole, byte for byte, a chunk at a time", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock() });
    await log.append({ event_type: "tool_call_intercepted" });
    await log.close();
    const before = readFileSync(path);
    const torn = randomBytes(3 * 1024 * 1024 + 17).map((b) => (b === 0x0a ? 0x20 : b));
    appendFileSync(path, torn);
    const reopened = await openAuditLog(path, { clock: steppingClock(Date.UTC(2026, 0, 16)) });
    await reopened.close();
    expect(reopened.recovered).toMatchObject({ bytes: torn.length, sha256: sha256Ref(torn) });
    expect(readFileSync(reopened.recovered?.path ?? "").equals(torn)).toBe(true);
    expect(readFileSync(path).subarray(0, before.length).equals(before)).toBe(true);
    expect(verifyFile(path)).toMatchObject({ ok: true, count: 2 });
  });
});
