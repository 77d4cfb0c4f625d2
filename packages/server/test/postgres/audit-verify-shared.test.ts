/**
 * `GET /v1/audit/verify` and the console's audit page verify the whole PostgreSQL chain, which is read
 * into memory (100,000 events: about 2 s and 90 MB). Requests that arrive while a verification runs
 * share it: a burst of them holds one chain in memory, not one per request.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresAuditLog, openPostgresStore, type PostgresStore } from "@acp/store";
import { createPostgresAuditTrail } from "../../src/store/postgres/audit-trail.js";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";

const db = useTestDatabase();
const stores: PostgresStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
});

describe("verifying the PostgreSQL chain", () => {
  it("concurrent verifications share one read of the chain; a later one reads it again", async () => {
    const store = await openPostgresStore(db.url);
    stores.push(store);
    const log = createPostgresAuditLog(store, { clock: () => new Date() });
    for (const tool of ["read_a", "read_b", "read_c"]) {
      await log.append({ event_type: "policy_evaluated", tool, decision: "accept" });
    }
    let reads = 0;
    const counting: PostgresStore = {
      ...store,
      url: store.url,
      closed: store.closed,
      query: (text, values) => {
        if (text.includes("FROM acp_audit_events WHERE seq >")) reads++;
        return store.query(text, values);
      },
    };
    const trail = createPostgresAuditTrail(counting);
    const results = await Promise.all([trail.verify(), trail.verify(), trail.verify(), trail.verify()]);
    expect(reads).toBe(1);
    for (const r of results) expect(r).toMatchObject({ ok: true, count: 3 });
    await log.append({ event_type: "policy_evaluated", tool: "read_d", decision: "accept" });
    expect(await trail.verify()).toMatchObject({ ok: true, count: 4 });
    expect(reads).toBe(2);
  });
});
