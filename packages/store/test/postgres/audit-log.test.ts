/** The audit chain in PostgreSQL: one verifiable chain appended from several nodes at once. */
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { verifyAuditChain } from "@acp/core";
import {
  createPostgresAuditLog,
  exportPostgresAuditJsonl,
  openPostgresStore,
  readPostgresAuditLines,
  verifyPostgresAuditChain,
  verifyPostgresAuditRows,
  type PostgresStore,
} from "../../src/index.js";
import { useTestDatabase } from "./test-database.js";

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const clock = (): Date => new Date("2026-01-15T12:00:00.000Z");
const db = useTestDatabase();
let a: PostgresStore;
let b: PostgresStore;
let opened = false;
const dir = mkdtempSync(join(tmpdir(), "acp-pg-audit-"));

async function lines(store: PostgresStore): Promise<string[]> {
  const all: string[] = [];
  for await (const line of readPostgresAuditLines(store, { pageSize: 7 })) all.push(line);
  return all;
}

/** Opens the two nodes on first use and empties the chain before each test (a failure fails the test). */
beforeEach(async () => {
  if (!opened) {
    a = await openPostgresStore(db.url, { applicationName: "audit-a" });
    b = await openPostgresStore(db.url, { applicationName: "audit-b" });
    opened = true;
  }
  await a.query("TRUNCATE acp_audit_events");
});

afterAll(async () => {
  if (opened) await Promise.all([a.close(), b.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("postgres audit log", () => {
  it("keeps one verifiable chain when two nodes append concurrently, with signed checkpoints", async () => {
    const options = { clock, signer: privateKey, checkpointEvery: 9, maxBatch: 3 };
    const logA = createPostgresAuditLog(a, options);
    const logB = createPostgresAuditLog(b, options);
    // 20 rounds, in each two appends of each node at once: the nodes contend for the chain in every round
    // (however the machine schedules them, each round holds both nodes' events, so they interleave)
    const events = [];
    for (let round = 0; round < 20; round++) {
      const appends = [0, 1, 2, 3].map((k) => {
        const i = round * 4 + k;
        const log = i % 2 === 0 ? logA : logB;
        return log.append({ event_type: "policy_evaluated", request_id: `cr_${i}`, decision: "accept" });
      });
      events.push(...(await Promise.all(appends)));
    }
    await Promise.all([logA.close(), logB.close()]);
    const all = await lines(a);
    const verified = verifyAuditChain(all, { publicKey });
    expect(verified.problem).toBeNull();
    expect(verified.count).toBe(all.length);
    expect(verified.checkpoints).toBeGreaterThanOrEqual(Math.floor(80 / 9));
    expect(verified.eventsAfterLastCheckpoint).toBe(0);
    const ids = new Set(all.map((l) => (JSON.parse(l) as { id: string }).id));
    for (const e of events) expect(ids.has(e.id)).toBe(true);
    const nodes = all
      .map((l) => (JSON.parse(l) as { request_id: string | null }).request_id)
      .filter((r) => r !== null)
      .map((r) => Number(r.slice(3)) % 2);
    expect(nodes).toHaveLength(80);
    const switches = nodes.filter((n, i) => i > 0 && n !== nodes[i - 1]).length;
    expect(switches).toBeGreaterThanOrEqual(20);
  });

  it("exports JSONL that verifyAuditChain accepts, byte for byte the stored lines", async () => {
    const log = createPostgresAuditLog(b, { clock, signer: privateKey });
    for (let i = 0; i < 5; i++) await log.append({ event_type: "policy_evaluated", request_id: `cr_${i}` });
    await log.close();
    const path = join(dir, "audit.jsonl");
    expect(await exportPostgresAuditJsonl(a, path)).toBe(6);
    const text = readFileSync(path, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const exported = text.slice(0, -1).split("\n");
    expect(exported).toEqual(await lines(b));
    expect(verifyAuditChain(exported, { publicKey })).toMatchObject({ ok: true, count: 6, checkpoints: 1 });
    await expect(exportPostgresAuditJsonl(a, join(dir, "missing", "audit.jsonl"))).rejects.toThrow(/ENOENT/);
  });

  it("detects a row changed behind the log's back", async () => {
    const log = createPostgresAuditLog(a, { clock });
    for (let i = 0; i < 4; i++) await log.append({ event_type: "policy_evaluated", request_id: `cr_${i}` });
    await a.query(`UPDATE acp_audit_events SET line = replace(line, '"cr_2"', '"cr_9"') WHERE seq = 3`);
    const verified = await verifyPostgresAuditChain(b);
    expect(verified.ok).toBe(false);
    expect(verified.problem).toMatchObject({ line: 3, code: "hash_mismatch" });
  });

  it("cannot fork the chain: a second line at a taken position is refused by the table", async () => {
    const log = createPostgresAuditLog(a, { clock });
    await log.append({ event_type: "policy_evaluated" });
    const [first] = await lines(a);
    await expect(
      b.query(
        `INSERT INTO acp_audit_events (seq, event_hash, since_checkpoint, event_type, timestamp, line)
         VALUES (1, 'sha256:00', 1, 'policy_evaluated', 'x', $1)`,
        [first],
      ),
    ).rejects.toThrow(/duplicate key/);
    expect((await verifyPostgresAuditChain(a)).ok).toBe(true);
  });

  it("redacts secrets before hashing and refuses unknown event types and those the log writes itself", async () => {
    const log = createPostgresAuditLog(a, { clock });
    const event = await log.append({ event_type: "policy_evaluated", metadata: { password: "hunter2", note: "ok" } });
    expect(JSON.stringify(event)).not.toContain("hunter2");
    expect((await lines(a)).join("\n")).not.toContain("hunter2");
    await expect(log.append({ event_type: "checkpoint" })).rejects.toMatchObject({ code: "audit_event_reserved" });
    const hostile = { event_type: "made_up" } as unknown as Parameters<typeof log.append>[0];
    await expect(log.append(hostile)).rejects.toMatchObject({ code: "postgres_input_invalid" });
    expect(await log.checkpoint()).toBeNull();
    await log.close();
    await expect(log.append({ event_type: "policy_evaluated" })).rejects.toMatchObject({ code: "audit_log_closed" });
    expect((await verifyPostgresAuditChain(a)).count).toBe(1);
  });

  it("redacts the known vault values it is given, read on every append, also with the patterns off", async () => {
    let vault: readonly string[] = [];
    const log = createPostgresAuditLog(a, { clock, redaction: false, secrets: () => vault });
    await log.append({ event_type: "policy_evaluated", metadata: { password: "pw-kept-patterns-off" } });
    vault = ["vault-canary-value"]; // a vault opened after the log
    const event = await log.append({
      event_type: "tool_call_forwarded",
      tool: "http_get",
      request_id: "cr_vault-canary-value",
      metadata: { url: "https://api.example.com/?key=vault-canary-value", "vault-canary-value": 1 },
    });
    await log.close();
    expect(event.metadata["url"]).toBe("https://api.example.com/?key=[REDACTED]");
    expect(event.request_id).toBe("cr_[REDACTED]");
    const stored = (await lines(a)).join("\n");
    expect(stored).not.toContain("vault-canary");
    expect(stored).toContain("pw-kept-patterns-off");
    expect(await verifyPostgresAuditChain(a)).toMatchObject({ ok: true, count: 2 });
  });

  it("rejects the appends of a failed transaction and leaves the chain intact", async () => {
    const store = await openPostgresStore(db.url, { applicationName: "audit-doomed" });
    const log = createPostgresAuditLog(store, { clock });
    await log.append({ event_type: "policy_evaluated" });
    await store.close();
    await expect(log.append({ event_type: "policy_evaluated" })).rejects.toMatchObject({
      code: "postgres_store_closed",
    });
    const verified = await verifyPostgresAuditChain(a);
    expect(verified).toMatchObject({ ok: true, count: 1 });
  });

  it("verifies page by page with the whole-chain verifier's results, continues from a row, and names a duplicated row", async () => {
    const log = createPostgresAuditLog(a, { clock, signer: privateKey, checkpointEvery: 4 });
    for (let i = 0; i < 11; i++) await log.append({ event_type: "policy_evaluated", request_id: `cr_${i}` });
    const all = await lines(a);
    const first = await verifyPostgresAuditRows(a, { publicKey, pageSize: 3 });
    expect(first.verification).toEqual(verifyAuditChain(all, { publicKey }));
    expect(first).toMatchObject({ verification: { ok: true, count: all.length }, lastSeq: all.length });
    for (let i = 0; i < 5; i++) await log.append({ event_type: "policy_evaluated", request_id: `cr_more_${i}` });
    await log.close();
    const more = await lines(a);
    const continued = await verifyPostgresAuditRows(a, {
      publicKey,
      pageSize: 3,
      from: first.verification,
      afterSeq: first.lastSeq,
    });
    expect(continued).toEqual({ verification: verifyAuditChain(more, { publicKey }), lastSeq: more.length });
    // row 12 becomes a copy of row 3: it names row 2, far behind the page being read
    await a.query("UPDATE acp_audit_events SET line = $1 WHERE seq = 12", [more[2]]);
    const tampered = await lines(a);
    const verified = await verifyPostgresAuditChain(a, { publicKey });
    expect(verified.problem).toMatchObject({ line: 12, code: "reordered" });
    expect(verified).toEqual(verifyAuditChain(tampered, { publicKey }));
  });
});
