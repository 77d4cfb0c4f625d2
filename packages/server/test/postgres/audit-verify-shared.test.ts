/**
 * `GET /v1/audit/verify` and the console's audit page verify the PostgreSQL chain page by page, and
 * continue from the last verified row: only rows appended since are read. Requests that arrive while a
 * verification runs share it.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresAuditLog, openPostgresStore, verifyPostgresAuditChain, type PostgresStore } from "@acp/store";
import { createPostgresAuditTrail } from "../../src/store/postgres/audit-trail.js";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";

const db = useTestDatabase();
const stores: PostgresStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
});

describe("verifying the PostgreSQL chain", () => {
  it("concurrent verifications share one read of the chain; a later one reads only the rows appended", async () => {
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

  it("finds a row rewritten in place at the next whole verification, and a cut chain at once", async () => {
    const store = await openPostgresStore(db.url);
    stores.push(store);
    await store.query("TRUNCATE acp_audit_events");
    const log = createPostgresAuditLog(store, { clock: () => new Date() });
    const add = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) await log.append({ event_type: "policy_evaluated", tool: `t_${i}` });
    };
    const clock = { ms: 0 };
    const trail = createPostgresAuditTrail(store, { now: () => clock.ms, fullEveryMs: 1000 });
    await add(6);
    expect(await trail.verify()).toMatchObject({ ok: true, count: 6 });
    // row 2 rewritten with row 3's line: only rows after row 6 are read, so it is not seen yet
    await store.query(
      "UPDATE acp_audit_events SET line = (SELECT line FROM acp_audit_events WHERE seq = 3) WHERE seq = 2",
    );
    await add(2);
    expect(await trail.verify()).toMatchObject({ ok: true, count: 8 });
    clock.ms += 1000;
    expect(await trail.verify()).toMatchObject({ ok: true, count: 8 }); // starts the whole verification
    await trail.idle();
    const found = await trail.verify();
    expect(found.problem).toMatchObject({ line: 2, code: "broken_link" });
    expect(found).toEqual(await verifyPostgresAuditChain(store));

    // intact again; then the last verified row removed: verified whole at once
    await store.query("TRUNCATE acp_audit_events");
    const fresh = createPostgresAuditLog(store, { clock: () => new Date() });
    for (let i = 0; i < 5; i++) await fresh.append({ event_type: "policy_evaluated", tool: `u_${i}` });
    expect(await trail.verify()).toMatchObject({ ok: true, count: 5 });
    await store.query("DELETE FROM acp_audit_events WHERE seq = 5");
    expect(await trail.verify()).toMatchObject({ ok: true, count: 4 });
    await store.query("DELETE FROM acp_audit_events WHERE seq = 2");
    const gap = await trail.verify();
    expect((await verifyPostgresAuditChain(store)).problem).toMatchObject({ line: 2, code: "broken_link" });
    expect(gap).toMatchObject({ ok: true, count: 4 }); // row 4 is still there: continued, the gap not seen yet
    clock.ms += 1000;
    await trail.verify();
    await trail.idle();
    expect((await trail.verify()).problem).toMatchObject({ line: 2, code: "broken_link" });
  });
});
