import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { openPostgresStore, type PostgresStore } from "@acp/store";
import { createTestDatabase, type TestDatabase } from "./test-database.js";

/**
 * What the anchor tests share: a database of their own (its audit chain emptied after each test, dropped
 * after the file), an Ed25519 key pair, and fresh node homes (`anchorPath`), removed afterwards. Call it at
 * the top of a test file: it registers the hooks.
 */
export function anchorTestBed(prefix: string) {
  let db: TestDatabase | undefined;
  let store: PostgresStore | undefined;
  const dirs: string[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    store = await openPostgresStore(db.url);
  });
  afterEach(async () => {
    await store?.query("DELETE FROM acp_audit_events");
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const storeNow = (): PostgresStore => {
    if (store === undefined) throw new Error("the test database is not open yet (use the bed inside a test)");
    return store;
  };
  return {
    store: storeNow,
    privateKey,
    publicKey,
    query: (text: string, values: unknown[]) => storeNow().query(text, values),
    /** A new node home's anchor path (its file is not made). */
    anchorPath(): string {
      const home = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(home);
      return join(home, "audit-postgres-0123456789abcdef.checkpoint");
    },
  };
}
