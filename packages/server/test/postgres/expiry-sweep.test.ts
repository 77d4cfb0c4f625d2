/**
 * A node killed while its call waited, and no one completed the request: before, the request stayed
 * pending in PostgreSQL after it expired and the chain held its `consent_requested` and nothing after.
 * Now a node (at start, then every minute) settles requests that expired more than a minute ago and
 * records `consent_expired` (`unattended: true`) for them — once, whichever node wins. A request that
 * expired just now is left to the node still waiting on it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openEmbeddedServer, type EmbeddedServer } from "@acp/server";
import { createPostgresPendingConsentStore, openPostgresStore } from "@acp/store";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { eventually, namedPipelines, testKeys } from "../harness.js";
import { leftBehindRow } from "../pending-rows.js";

const db = useTestDatabase();
const dirs: string[] = [];
const running: EmbeddedServer[] = [];
afterAll(async () => {
  for (const s of running) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function startNode(keys: ReturnType<typeof testKeys>): Promise<EmbeddedServer> {
  const home = mkdtempSync(join(tmpdir(), "acp-sweep-"));
  dirs.push(home);
  const node = await openEmbeddedServer({
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    ...namedPipelines(),
    keys,
    clock: () => new Date(),
    loopbackOnly: true,
    storageUrl: db.url,
  });
  running.push(node);
  return node;
}

describe("requests left pending by a node that died", () => {
  it("are concluded as expired, once across nodes, and recorded; a request that just expired is left alone", async () => {
    const store = await openPostgresStore(db.url);
    const pending = createPostgresPendingConsentStore(store);
    const now = Date.now();
    const orphan = "cr_00000000000000000000000000000001";
    const fresh = "cr_00000000000000000000000000000002";
    await pending.insert(leftBehindRow(orphan, now - 5 * 60_000)); // expired five minutes ago: its node is gone
    await pending.insert(leftBehindRow(fresh, now - 1_000)); // expired a second ago: its node may be settling it
    await store.close();

    const keys = testKeys();
    const [a, b] = await Promise.all([startNode(keys), startNode(keys)]); // both sweep at start
    const recorded = await eventually(async () => {
      const page = await a.stores.audit.list({ limit: 10, requestId: orphan });
      return page.events.length > 0 ? page.events : false;
    });
    await Promise.all([a.stores.auditLog.flush(), b.stores.auditLog.flush()]);
    const all = await a.stores.audit.list({ limit: 10, requestId: orphan });
    expect(all.events).toHaveLength(1); // one node won
    expect(recorded[0]?.event).toMatchObject({
      event_type: "consent_expired",
      tool: "write_file",
      agent: "agent-7",
      metadata: { unattended: true },
    });
    expect((await a.stores.pending.get(orphan))?.status).toBe("expired");
    expect((await a.stores.pending.get(fresh))?.status).toBe("pending");
    expect((await a.stores.audit.list({ limit: 10, requestId: fresh })).events).toEqual([]);
    expect(await a.stores.audit.verify()).toMatchObject({ ok: true });
  });
});
