/**
 * The console's audit listing on PostgreSQL reads a row's length before its line: whoever can write the
 * database can make a row hundreds of megabytes long, and the listing fetched its rows whole (a page of 30
 * such rows took gigabytes). A row longer than any audit line is left out of the listing (its verification
 * names it), and a page stops once its lines pass 8 MiB, naming where to read on. A node's start reads the
 * chain's first and newest checkpoint rows the same way.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresAuditLog, MAX_AUDIT_ROW_BYTES, openPostgresStore, type PostgresStore } from "@acp/store";
import { createPostgresAuditTrail } from "../../src/store/postgres/audit-trail.js";
import { checkChainKey } from "../../src/store/postgres/postgres-stores.js";
import { testKeys } from "../harness.js";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";

const db = useTestDatabase();
const stores: PostgresStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
});

/** The store, and the longest line any of its queries returned. */
async function measured(): Promise<{ store: PostgresStore; longest: () => number }> {
  const store = await openPostgresStore(db.url);
  stores.push(store);
  await store.query("TRUNCATE acp_audit_events");
  let longest = 0;
  const wrapped: PostgresStore = {
    ...store,
    url: store.url,
    closed: store.closed,
    query: (async (text: string, values?: readonly unknown[]) => {
      const result = await store.query(text, values);
      for (const row of result.rows as { line?: unknown }[]) {
        if (typeof row.line === "string") longest = Math.max(longest, row.line.length);
      }
      return result;
    }) as PostgresStore["query"],
  };
  return { store: wrapped, longest: () => longest };
}

async function append(store: PostgresStore, n: number): Promise<void> {
  const log = createPostgresAuditLog(store, { clock: () => new Date() });
  for (let i = 1; i <= n; i++) await log.append({ event_type: "policy_evaluated", tool: `t_${i}` });
}

describe("the PostgreSQL audit listing and rows too long for any audit line", () => {
  it("does not fetch a row longer than an audit line: it is left out, the others listed", async () => {
    const { store, longest } = await measured();
    await append(store, 5);
    await store.query("UPDATE acp_audit_events SET line = repeat('x', $1) WHERE seq = 3", [MAX_AUDIT_ROW_BYTES + 1]);
    const trail = createPostgresAuditTrail(store);
    const page = await trail.list({ limit: 30 });
    expect(page.events.map((e) => e.line)).toEqual([5, 4, 2, 1]);
    expect(page).toMatchObject({ total: 5, next: null });
    const filtered = await trail.list({ limit: 30, q: "t_" });
    expect(filtered.events.map((e) => e.line)).toEqual([5, 4, 2, 1]);
    expect(longest()).toBeLessThan(MAX_AUDIT_ROW_BYTES);
    // the verification names it (its `holds` check and the console's status read it as the verifier does)
    expect((await trail.verify()).problem).toMatchObject({ line: 3, code: "not_json" });
    expect(longest()).toBeLessThan(MAX_AUDIT_ROW_BYTES);
  });

  it("stops a page once its lines pass 8 MiB and reads on from where it stopped", async () => {
    const { store, longest } = await measured();
    await append(store, 6);
    // rows 2 to 4 just under the row limit: three of them pass 8 MiB
    const big = MAX_AUDIT_ROW_BYTES - 64 * 1024;
    await store.query("UPDATE acp_audit_events SET line = repeat('y', $1) WHERE seq BETWEEN 2 AND 4", [big]);
    const trail = createPostgresAuditTrail(store);
    const first = await trail.list({ limit: 30 });
    expect(first.events.map((e) => e.line)).toEqual([6, 5]);
    // rows 4 to 2 read (not JSON, not listed); row 1 would start past 8 MiB: the next page starts there
    expect(first.next).toBe(2);
    const second = await trail.list({ limit: 30, before: first.next ?? 0 });
    expect(second.events.map((e) => e.line)).toEqual([1]);
    expect(second.next).toBeNull();
    expect(longest()).toBeLessThanOrEqual(big);
  });

  it("a node's start does not fetch a checkpoint row longer than an audit line, and starts", async () => {
    const { store, longest } = await measured();
    const keys = testKeys();
    const log = createPostgresAuditLog(store, { clock: () => new Date(), signer: keys.privateKey });
    await log.append({ event_type: "policy_evaluated", tool: "t_1" });
    await log.checkpoint();
    await store.query(
      "UPDATE acp_audit_events SET line = repeat('x', $1) WHERE seq = (SELECT max(seq) FROM acp_audit_events)",
      [MAX_AUDIT_ROW_BYTES + 1],
    );
    const foreign: number[] = [];
    await checkChainKey(store, keys.publicKey, (line) => foreign.push(line));
    expect(foreign).toEqual([]); // no readable checkpoint: nothing to refuse (the verifier refuses the row)
    expect(longest()).toBeLessThan(MAX_AUDIT_ROW_BYTES);
  });
});
