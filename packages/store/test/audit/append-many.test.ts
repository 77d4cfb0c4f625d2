import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AuditEventInput } from "@acp/core";
import { openAuditLog, type AuditFsyncMode } from "../../src/audit/index.js";
import { keyPair, readEvents, readLines, steppingClock, tempHomes, verifyFile } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);

const call = (n: number): AuditEventInput => ({
  event_type: "tool_call_intercepted",
  request_id: `cr_${n}`,
  agent: "agent-1",
  tool: "send_email",
  metadata: { parameters: { to: "a@example.com", n } },
});
const calls = (from: number, n: number): AuditEventInput[] => Array.from({ length: n }, (_, i) => call(from + i));

describe("appendMany: several events, one promise", () => {
  it.each<AuditFsyncMode>(["every", "batch"])(
    "%s mode: writes every event in call order, split over writes of maxBatch, with checkpoints, and the log verifies",
    async (fsync) => {
      const keys = keyPair();
      const path = join(homes.make(), "audit.jsonl");
      const log = await openAuditLog(path, {
        clock: steppingClock(),
        fsync,
        signer: keys.privateKey,
        checkpointEvery: 7,
        maxBatch: 5,
      });
      const first = log.appendMany(calls(0, 23));
      const single = log.append(call(23));
      const second = log.appendMany(calls(24, 4));
      await expect(first).resolves.toBeUndefined();
      const event = await single;
      await second;
      await log.close();
      const events = readEvents(path).filter((e) => e.event_type !== "checkpoint");
      expect(events.map((e) => e.request_id)).toEqual(calls(0, 28).map((c) => c.request_id));
      expect(events[23]).toEqual(event);
      expect(new Set(events.map((e) => e.id)).size).toBe(28);
      expect(events[0]?.previous_event_hash).toBeNull();
      const result = verifyFile(path, keys.publicKey);
      expect(result.problem).toBeNull();
      expect(result).toMatchObject({ ok: true, count: 28 + 4, checkpoints: 4, eventsAfterLastCheckpoint: 0 });
    },
  );

  it("gives the events of one call one timestamp and chains them to what was there before", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock(), fsync: "batch" });
    const before = await log.append(call(0));
    await log.appendMany(calls(1, 3));
    await log.close();
    const events = readEvents(path);
    expect(events[1]?.previous_event_hash).toBe(before.event_hash);
    expect(new Set(events.slice(1).map((e) => e.timestamp)).size).toBe(1);
    expect(verifyFile(path).ok).toBe(true);
  });

  it("redacts every event before it is hashed", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const secret = "vault-value-canary-42";
    const log = await openAuditLog(path, { clock: steppingClock(), secrets: () => [secret] });
    await log.appendMany([
      { event_type: "tool_call_forwarded", metadata: { headers: { Authorization: "Bearer abcdefgh12345678" } } },
      { event_type: "tool_call_forwarded", tool: `t-${secret}`, metadata: { note: `uses ${secret}` } },
    ]);
    await log.close();
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain("canary");
    expect(text).not.toContain("abcdefgh12345678");
    expect(readEvents(path)[1]?.metadata["note"]).toBe("uses [REDACTED]");
    expect(verifyFile(path).ok).toBe(true);
  });

  it("refuses the whole call, writing nothing of it, when one input is reserved or not JSON", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock(), fsync: "batch" });
    await expect(log.appendMany([call(1), { event_type: "checkpoint" }])).rejects.toMatchObject({
      code: "audit_event_reserved",
    });
    await expect(
      log.appendMany([call(2), { event_type: "policy_error", metadata: { n: Number.NaN } }]),
    ).rejects.toThrow(/not finite/);
    await expect(log.appendMany([])).resolves.toBeUndefined();
    await log.appendMany([call(3)]);
    await log.close();
    expect(readEvents(path).map((e) => e.request_id)).toEqual(["cr_3"]);
    await expect(log.appendMany([call(4)])).rejects.toMatchObject({ code: "audit_log_closed" });
    expect(readLines(path)).toHaveLength(1);
  });

  it("rejects a call whose batch cannot be written and drops the rest of it, then goes on with the next call", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, {
      clock: steppingClock(),
      fsync: "batch",
      maxBatch: 2,
      lock: { timeoutMs: 50 },
    });
    await log.appendMany(calls(0, 1));
    // a live holder (this very process) keeps the lock: the next batch times out waiting for it
    writeFileSync(`${path}.lock`, `${process.pid}\n${hostname()}\nheld-by-test\n`);
    await expect(log.appendMany(calls(1, 5))).rejects.toMatchObject({ code: "audit_lock_timeout" });
    rmSync(`${path}.lock`);
    await log.appendMany(calls(6, 3));
    await log.close();
    expect(readEvents(path).map((e) => e.request_id)).toEqual(["cr_0", "cr_6", "cr_7", "cr_8"]);
    expect(verifyFile(path).ok).toBe(true);
  });
});
