import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from "node:fs";
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

describe("audit log writer", () => {
  it("writes a chain with a signed checkpoint every N events and at close, which verifies", async () => {
    const keys = keyPair();
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey, checkpointEvery: 4 });
    const written = [];
    for (let i = 0; i < 10; i++) written.push(await log.append(call(i)));
    await log.close();
    const events = readEvents(path);
    expect(events.map((e) => e.event_type === "checkpoint")).toEqual([
      ...[false, false, false, false, true],
      ...[false, false, false, false, true],
      ...[false, false, true],
    ]);
    expect(events.filter((e) => e.event_type !== "checkpoint")).toEqual(written);
    const result = verifyFile(path, keys.publicKey);
    expect(result.problem).toBeNull();
    expect(result).toMatchObject({ ok: true, count: 13, checkpoints: 3, eventsAfterLastCheckpoint: 0 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("resolves append with the id written in the line, also for lines staged again in a new arena", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock(), fsync: "batch" });
    // lines of ~900 KB: the fifth does not fit what is left of the 4 MiB arena and is staged again in a new one
    const big = (n: number): AuditEventInput => ({
      event_type: "tool_call_completed",
      request_id: `cr_big_${n}`,
      metadata: { result: "x".repeat(900 * 1024) },
    });
    const inputs = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? call(i) : big(i)));
    const written = await Promise.all(inputs.map((input) => log.append(input)));
    await log.close();
    const events = readEvents(path);
    expect(events.map((e) => e.id)).toEqual(written.map((e) => e.id));
    expect(new Set(written.map((e) => e.id)).size).toBe(12);
    for (const e of written)
      expect(e.id).toMatch(/^ae_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(events).toEqual(written);
    expect(verifyFile(path).ok).toBe(true);
  });

  it.each<AuditFsyncMode>(["every", "batch"])(
    "%s mode: every appended event is in the file after close",
    async (fsync) => {
      const path = join(homes.make(), "audit.jsonl");
      const log = await openAuditLog(path, { clock: steppingClock(), fsync });
      const all = await Promise.all(Array.from({ length: 300 }, (_, i) => log.append(call(i))));
      await log.close();
      const lines = readLines(path);
      expect(lines).toHaveLength(300);
      expect(readEvents(path).map((e) => e.request_id)).toEqual(all.map((e) => e.request_id));
      expect(verifyFile(path).ok).toBe(true);
    },
  );

  it("continues the chain across reopen", async () => {
    const keys = keyPair();
    const path = join(homes.make(), "audit.jsonl");
    const first = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    await first.append(call(1));
    await first.close();
    const second = await openAuditLog(path, { clock: steppingClock(), signer: keys.privateKey });
    const event = await second.append(call(2));
    await second.close();
    const events = readEvents(path);
    expect(event.previous_event_hash).toBe(events[1]?.event_hash);
    expect(verifyFile(path, keys.publicKey)).toMatchObject({ ok: true, count: 4, checkpoints: 2 });
  });

  it("redacts secrets before hashing: the raw secret appears nowhere in the file", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock() });
    const secret = "sk-canary0123456789abcdef";
    const event = await log.append({
      event_type: "tool_call_forwarded",
      tool: "http_get",
      metadata: {
        parameters: { url: "https://api.example.com", headers: { Authorization: `Bearer ${secret}` } },
        api_key: secret,
        note: `key is ${secret}`,
        password: "hunter2-canary",
      },
    });
    await log.close();
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain("canary");
    expect(JSON.stringify(event)).not.toContain("canary");
    expect(event.metadata["note"]).toBe("key is [REDACTED]");
    expect(verifyFile(path).ok).toBe(true);
  });

  it("refuses reserved event types and non-JSON metadata without disturbing other appends", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock(), fsync: "batch" });
    await expect(log.append({ event_type: "checkpoint" })).rejects.toMatchObject({ code: "audit_event_reserved" });
    const bad = log.append({ event_type: "policy_error", metadata: { n: Number.NaN } });
    const good = log.append(call(1));
    await expect(bad).rejects.toThrow(/not finite/);
    await expect(good).resolves.toMatchObject({ request_id: "cr_1" });
    await log.close();
    expect(readLines(path)).toHaveLength(1);
    await expect(log.append(call(2))).rejects.toMatchObject({ code: "audit_log_closed" });
  });

  it("refuses to extend a log whose last line does not hash to itself", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock() });
    await log.append(call(1));
    await log.close();
    writeFileSync(path, readFileSync(path, "utf8").replace("send_email", "send_money"));
    await expect(openAuditLog(path, { clock: steppingClock() })).rejects.toMatchObject({ code: "audit_log_corrupt" });
  });

  it("refuses a symbolic link at the log's name and writes nothing through it", async () => {
    const dir = homes.make();
    const victim = join(dir, "victim");
    writeFileSync(victim, "precious\n");
    symlinkSync(victim, join(dir, "audit.jsonl"));
    await expect(openAuditLog(join(dir, "audit.jsonl"), { clock: steppingClock() })).rejects.toMatchObject({
      code: "audit_log_unsafe",
    });
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
  });

  it("creates the log, its anchor and its lock 0600 under a permissive umask", async () => {
    const dir = homes.make();
    const path = join(dir, "audit.jsonl");
    const old = process.umask(0o000);
    try {
      const log = await openAuditLog(path, { clock: steppingClock(), signer: keyPair().privateKey });
      await log.append(call(1));
      await log.close();
    } finally {
      process.umask(old);
    }
    for (const file of [path, `${path}.checkpoint`]) expect(statSync(file).mode & 0o777).toBe(0o600);
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o077, name).toBe(0);
  });

  it("refuses a named pipe at the log's name instead of waiting on it for ever", async () => {
    const path = join(homes.make(), "audit.jsonl");
    execFileSync("mkfifo", [path]);
    await expect(openAuditLog(path, { clock: steppingClock() })).rejects.toMatchObject({
      code: "audit_log_unsafe",
      message: expect.stringContaining("is not a regular file") as unknown,
    });
  });

  it("picks up events another writer appended to the same file", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const a = await openAuditLog(path, { clock: steppingClock() });
    const b = await openAuditLog(path, { clock: steppingClock() });
    for (let i = 0; i < 6; i++) await (i % 2 === 0 ? a : b).append(call(i));
    await Promise.all([a.close(), b.close()]);
    expect(verifyFile(path)).toMatchObject({ ok: true, count: 6 });
  });

  it("detects a log replaced while open instead of writing to a dead file", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const log = await openAuditLog(path, { clock: steppingClock() });
    await log.append(call(1));
    writeFileSync(`${path}.new`, "");
    renameSync(`${path}.new`, path);
    await expect(log.append(call(2))).rejects.toMatchObject({ code: "audit_log_replaced" });
    await log.close().catch(() => undefined);
  });
});
