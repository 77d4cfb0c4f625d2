/**
 * Rows of the PostgreSQL chain too long for any audit line (whoever can write the database can make a row's
 * `line` hundreds of megabytes): reading the chain fetches a page of rows at a time, and before 28 Nov 2026 a
 * page was 1000 whole rows, so `acp audit verify --storage-url` took 2 GB of memory for 30 rows of 60 MB (and
 * failed on more), and a node's anchor, read at `acp serve`'s start, alike. Now a row longer than the verifier
 * reads comes as a stand-in the verifier refuses as it would the row, and a page holds at most a few megabytes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPairSync } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_AUDIT_LINE_LENGTH } from "@acp/core";
import {
  AuditLogError,
  createPostgresAuditLog,
  openPostgresAuditAnchor,
  openPostgresStore,
  readPostgresAuditLines,
  verifyPostgresAuditChain,
  type PostgresStore,
} from "../../src/index.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
const dir = mkdtempSync(join(tmpdir(), "acp-pg-oversized-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The store, its queries counted: the most bytes of `line` text any one result held. */
function counted(store: PostgresStore): { store: PostgresStore; most: () => number } {
  let most = 0;
  const query = async (text: string, values?: unknown[]): Promise<{ rows: unknown[] }> => {
    const result = await store.query(text, values);
    let bytes = 0;
    for (const row of result.rows as { line?: unknown }[])
      if (typeof row.line === "string") bytes += Buffer.byteLength(row.line);
    most = Math.max(most, bytes);
    return result;
  };
  return { store: { query } as unknown as PostgresStore, most: () => most };
}

describe("postgres audit chain with rows longer than any audit line", () => {
  it("verifying and reading the chain never fetch such a row whole, nor a page of megabytes; the verdict is as before", async () => {
    const store = await openPostgresStore(db.url, { applicationName: "oversized" });
    try {
      const log = createPostgresAuditLog(store, { clock: () => new Date("2026-01-15T12:00:00.000Z") });
      for (let i = 0; i < 6; i++) await log.append({ event_type: "policy_evaluated", tool: `t_${i}`, decision: "ask" });
      await log.close();
      // rows 2 to 5 made 4 MiB each: longer than the verifier reads (1 MiB characters, at most 3 MiB of UTF-8)
      await store.query("UPDATE acp_audit_events SET line = repeat('a', 4 * 1024 * 1024) WHERE seq BETWEEN 2 AND 5");
      const spy = counted(store);
      const result = await verifyPostgresAuditChain(spy.store);
      expect(result.ok).toBe(false);
      expect(result.problem).toMatchObject({ line: 2, code: "not_json" });
      expect(result.problem?.message).toBe(`line longer than ${MAX_AUDIT_LINE_LENGTH} characters`);
      expect(spy.most()).toBeLessThan(1024 * 1024);

      // every row is read, in order; a row too long is its stand-in, longer than any line the verifier reads
      const lines: string[] = [];
      for await (const line of readPostgresAuditLines(spy.store)) lines.push(line); // 4 rows, then 2: cut at 8 MiB
      expect(lines).toHaveLength(6);
      expect(lines.map((l) => l.length > MAX_AUDIT_LINE_LENGTH)).toEqual([false, true, true, true, true, false]);
      expect(spy.most()).toBeLessThan(1024 * 1024);

      // a node's first start on this chain verifies it from row 1: refused, without fetching the rows whole
      const { publicKey } = generateKeyPairSync("ed25519");
      const first = counted(store);
      const opened = openPostgresAuditAnchor((t, v) => first.store.query(t, v), {
        path: join(dir, "audit-postgres-test.checkpoint"),
        publicKey,
      });
      await expect(opened).rejects.toBeInstanceOf(AuditLogError);
      await expect(opened).rejects.toMatchObject({ code: "audit_anchor_missing" });
      expect(first.most()).toBeLessThan(1024 * 1024);
    } finally {
      await store.close();
    }
  });

  it("a row whose line is NULL (the column's NOT NULL dropped) is a line that is not JSON, not a crash nor a line too long", async () => {
    const store = await openPostgresStore(db.url, { applicationName: "null-line" });
    try {
      await store.query("TRUNCATE acp_audit_events");
      const log = createPostgresAuditLog(store, { clock: () => new Date("2026-01-15T12:00:00.000Z") });
      for (let i = 0; i < 3; i++) await log.append({ event_type: "policy_evaluated", tool: `t_${i}`, decision: "ask" });
      await log.close();
      await store.query("ALTER TABLE acp_audit_events ALTER COLUMN line DROP NOT NULL");
      await store.query("UPDATE acp_audit_events SET line = NULL WHERE seq = 2");
      const result = await verifyPostgresAuditChain(store);
      expect(result.problem).toMatchObject({ line: 2, code: "not_json", message: "line is not JSON" });
      expect(result.afterProblem).toMatchObject({ lines: 1, complete: true });
    } finally {
      await store.query("UPDATE acp_audit_events SET line = '' WHERE line IS NULL");
      await store.query("ALTER TABLE acp_audit_events ALTER COLUMN line SET NOT NULL");
      await store.close();
    }
  });
});
