import { sign } from "node:crypto";
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

  it("two writers with queues behind them take turns at one file: a batch sealed ahead is sealed again after the other wrote", async () => {
    // each writer seals its next batch while its current one is fsynced, assuming it will still end the
    // file; the other writer takes the lock in between, so that batch must be unsealed and sealed again
    const keys = keyPair();
    const path = join(homes.make(), "audit.jsonl");
    const options = {
      clock: steppingClock(),
      fsync: "batch",
      signer: keys.privateKey,
      checkpointEvery: 7,
      maxBatch: 6,
    } as const;
    const a = await openAuditLog(path, options);
    const b = await openAuditLog(path, options);
    const tagged = (tag: string, from: number, n: number): AuditEventInput[] =>
      calls(from, n).map((c) => ({ ...c, agent: tag }));
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 12; i++) writes.push(a.appendMany(tagged("a", i * 5, 5)), b.appendMany(tagged("b", i * 5, 5)));
    await Promise.all(writes);
    await Promise.all([a.close(), b.close()]);
    const events = readEvents(path).filter((e) => e.event_type !== "checkpoint");
    for (const tag of ["a", "b"])
      expect(events.filter((e) => e.agent === tag).map((e) => e.request_id)).toEqual(
        calls(0, 60).map((c) => c.request_id),
      );
    // the writers did take turns (each turn after the first invalidates what the other sealed ahead)
    let turns = 0;
    for (let i = 1; i < events.length; i++) if (events[i]?.agent !== events[i - 1]?.agent) turns++;
    expect(turns).toBeGreaterThan(4);
    const result = verifyFile(path, keys.publicKey);
    expect(result.problem).toBeNull();
    expect(result.ok).toBe(true);
  });

  it("a checkpoint signer that fails while a batch is sealed ahead: the batch is sealed again under the lock, or refused there", async () => {
    const keys = keyPair();
    const path = join(homes.make(), "audit.jsonl");
    let signatures = 0;
    let failFrom = 3; // the 3rd signature fails once; from the 9th on, every one fails
    const signer = (message: Uint8Array): Uint8Array => {
      signatures++;
      if (signatures === failFrom) {
        failFrom = 9;
        throw new Error("signer unavailable");
      }
      if (signatures >= 9) throw new Error("signer gone");
      return sign(null, message, keys.privateKey);
    };
    const log = await openAuditLog(path, {
      clock: steppingClock(),
      fsync: "batch",
      signer,
      checkpointEvery: 4,
      maxBatch: 6,
    });
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => log.appendMany(calls(i * 3, 3))));
    await log.close().catch(() => undefined);
    expect(results.some((r) => r.status === "fulfilled")).toBe(true);
    const written = readEvents(path)
      .filter((e) => e.event_type !== "checkpoint")
      .map((e) => e.request_id);
    // what was written is whole calls, in call order; a refused call left nothing
    const fulfilled = results.flatMap((r, i) =>
      r.status === "fulfilled" ? calls(i * 3, 3).map((c) => c.request_id) : [],
    );
    expect(written).toEqual(fulfilled);
    for (const r of results) if (r.status === "rejected") expect(String(r.reason)).toMatch(/signer/);
    const result = verifyFile(path, keys.publicKey);
    expect(result.problem).toBeNull();
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
