/**
 * A node started with other home keys than the nodes already on the database (a home not copied, no
 * `acp init`): before, it joined and signed checkpoints no other node verifies, and the shared chain
 * read as tampered on every node for good. Now it refuses to start, naming the fix; a node with the
 * chain's key starts, and is told when a foreign checkpoint was already written.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresAuditLog, openPostgresStore } from "@acp/store";
import { openServerStores, type ServiceKeyPair } from "@acp/server";
import { createTestDatabase, type TestDatabase } from "../../../store/test/postgres/test-database.js";
import { testKeys } from "../harness.js";

const dbs: TestDatabase[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const db of dbs) await db.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function freshDatabase(): Promise<string> {
  const db = await createTestDatabase();
  dbs.push(db);
  return db.url;
}

function open(url: string, keys: ServiceKeyPair, onError?: (err: Error) => void) {
  const dir = mkdtempSync(join(tmpdir(), "acp-chain-key-"));
  dirs.push(dir);
  return openServerStores({
    storageUrl: url,
    statePath: join(dir, "state.db"),
    auditPath: join(dir, "audit.jsonl"),
    clock: () => new Date(),
    keys,
    ...(onError !== undefined ? { onError } : {}),
  });
}

/** A node's life: a few events, then the final signed checkpoint at close. */
async function runNode(url: string, keys: ServiceKeyPair): Promise<void> {
  const stores = await open(url, keys);
  await stores.auditLog.append({ event_type: "policy_evaluated", tool: "read_a", decision: "accept" });
  await stores.close();
}

describe("a node's key and the chain's", () => {
  it("a node with other keys than the chain's first checkpoint refuses to start and says what to do", async () => {
    const url = await freshDatabase();
    const home = testKeys();
    await runNode(url, home);
    await expect(open(url, testKeys())).rejects.toThrow(/signed with another key .*copy keys\//);
    // the chain's own key still opens, and nothing was written by the refused node
    const again = await open(url, home);
    const verified = await again.audit.verify();
    expect(verified).toMatchObject({ ok: true, count: 2, signaturesChecked: true });
    await again.close();
  });

  it("a foreign newest checkpoint (a node with other keys ran already) is reported, not refused", async () => {
    const url = await freshDatabase();
    const home = testKeys();
    await runNode(url, home); // the chain's key
    // a node with other keys wrote a checkpoint before this check existed
    const store = await openPostgresStore(url);
    const rogue = createPostgresAuditLog(store, { clock: () => new Date(), signer: testKeys().privateKey });
    await rogue.append({ event_type: "policy_evaluated", tool: "read_b", decision: "accept" });
    await rogue.close();
    await store.close();
    const told: string[] = [];
    const stores = await open(url, home, (err) => told.push(err.message));
    expect(told.some((m) => /checkpoint signed with another key \(line 4\)/.test(m))).toBe(true);
    expect((await stores.audit.verify()).problem).toMatchObject({ line: 4, code: "bad_checkpoint_signature" });
    await stores.close();
  });
});
