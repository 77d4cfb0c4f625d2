/**
 * `GET /v1/audit/verify` and the console's audit page on PostgreSQL hold the chain to the node's anchor in its
 * home (`audit-postgres-<id>.checkpoint`), as `acp audit verify --storage-url` does there. Before 29 Nov 2026
 * they verified the rows alone: a chain cut back while the node ran was reported intact, with its anchor
 * deleted (the marker still there) or not, until the node's own check (every 30 s) refused it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import {
  createPostgresAuditLog,
  markPostgresAnchored,
  postgresAnchoredMarkerPathOf,
  postgresAnchorMissingReason,
  verifyPostgresAuditChain,
  type PostgresAuditLog,
  type PostgresStore,
} from "@acp/store";
import { SESSION_COOKIE, SESSION_TTL_MS, type EmbeddedServer } from "@acp/server";
import { createPostgresAuditTrail } from "../../src/store/postgres/audit-trail.js";
import { anchorTestBed } from "../../../store/test/postgres/anchor-test-bed.js";
import { createTestDatabase } from "../../../store/test/postgres/test-database.js";
import { runSql } from "../../../cli/test/postgres/fixtures/node-chain.js";
import { openTestServerAt, readJson, testKeys } from "../harness.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const clean of cleanups.reverse()) await clean();
});

/** Its anchor file in the home (the only `audit-postgres-<16 hex>.checkpoint` there). */
function anchorIn(home: string): string {
  const names = readdirSync(home).filter((n) => /^audit-postgres-[0-9a-f]{16}\.checkpoint$/.test(n));
  expect(names).toHaveLength(1);
  return join(home, names[0] as string);
}

/**
 * A node of a fresh home on a fresh database, listening, whose chain holds two runs of three events and a
 * checkpoint (rows 4 and 8); its anchor names row 8.
 */
async function nodeWithTwoCheckpoints(): Promise<{ url: string; db: string; home: string; node: EmbeddedServer }> {
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  const home = mkdtempSync(join(tmpdir(), "acp-pg-verify-anchor-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const { node, url } = await openTestServerAt(home, { keys: testKeys(), storageUrl: db.url });
  // closed at the end whatever the chain then holds (a cut one fails the final checkpoint)
  cleanups.push(() => node.close().catch(() => undefined));
  const log = node.stores.auditLog as PostgresAuditLog;
  for (const run of ["a", "b"]) {
    for (const tool of ["read", "send", "list"])
      await log.append({ event_type: "policy_evaluated", tool: `${tool}_${run}`, decision: "accept" });
    await log.checkpoint();
  }
  return { url, db: db.url, home, node };
}

async function verifyAnswer(url: string): Promise<Record<string, unknown>> {
  return (await readJson(await fetch(`${url}/v1/audit/verify`))) as Record<string, unknown>;
}

async function auditPage(url: string, node: EmbeddedServer): Promise<string> {
  const { id } = await node.stores.consoleAuth.createSession(Date.now(), SESSION_TTL_MS);
  return (await fetch(`${url}/console/audit`, { headers: { cookie: `${SESSION_COOKIE}=${id}` } })).text();
}

describe("GET /v1/audit/verify on PostgreSQL, held to the node's anchor", () => {
  it("fails anchor_missing, as acp audit verify --storage-url does, when the chain is cut and the anchor deleted while the node runs", async () => {
    const { url, db, home, node } = await nodeWithTwoCheckpoints();
    const anchor = anchorIn(home);
    const marker = postgresAnchoredMarkerPathOf(anchor);
    expect(readFileSync(anchor, "utf8")).toContain('"event_type":"checkpoint"');
    expect(await verifyAnswer(url)).toMatchObject({ valid: true, ok: true, count: 8, problem: null });

    await runSql(db, "DELETE FROM acp_audit_events WHERE seq > 4"); // back to the first checkpoint, a genuine row
    rmSync(anchor);
    const answer = await verifyAnswer(url);
    expect(answer).toMatchObject({
      valid: false,
      ok: false,
      count: 4,
      after_problem: null,
      problem: { line: 0, code: "anchor_missing", where: "anchor", message: postgresAnchorMissingReason(anchor) },
    });
    // the words acp audit verify --storage-url says it in (serve-anchor-missing.test.ts)
    expect((answer["problem"] as { message: string }).message).toContain(
      `this node's anchor for it (${anchor}) is missing, though ${marker} records that it had one`,
    );
    expect(await verifyAnswer(url)).toMatchObject({ ok: false, problem: { code: "anchor_missing" } }); // not continued past it

    const page = await auditPage(url, node);
    expect(page).toContain("Chain BROKEN after 4 intact event(s). The anchor (anchor_missing): this node&#39;s anchor");
    expect(page).not.toContain("line 0"); // no event to show: the anchor is what is missing
    expect(page).not.toContain("Chain verified");
  });

  it("fails a chain cut back behind the anchor, the anchor still there, at once and on the console page", async () => {
    const { url, db, node } = await nodeWithTwoCheckpoints();
    expect(await verifyAnswer(url)).toMatchObject({ ok: true, count: 8 });
    await runSql(db, "DELETE FROM acp_audit_events WHERE seq > 4");
    expect(await verifyAnswer(url)).toMatchObject({
      valid: false,
      ok: false,
      count: 4,
      problem: { line: 5, code: "truncated_after_checkpoint", where: "log" },
    });
    expect(await auditPage(url, node)).toContain("First broken event: line 5 (truncated_after_checkpoint)");
  });

  it("holds the chain to the checkpoint the node holds in memory when the anchor and its marker are both deleted, or the anchor made older", async () => {
    const { url, db, home } = await nodeWithTwoCheckpoints();
    const anchor = anchorIn(home);
    expect(await verifyAnswer(url)).toMatchObject({ ok: true, count: 8 });
    const rows = await rowsOf(db);
    // the anchor replaced by the first checkpoint's line (genuine, signed) and the chain cut back to it
    writeFileSync(anchor, `${rows[3] ?? ""}\n`);
    await runSql(db, "DELETE FROM acp_audit_events WHERE seq > 4");
    const truncated = { ok: false, count: 4, problem: { line: 5, code: "truncated_after_checkpoint" } };
    expect(await verifyAnswer(url)).toMatchObject(truncated);
    // both files gone: no marker to say so, but the node still holds row 8
    rmSync(anchor);
    rmSync(postgresAnchoredMarkerPathOf(anchor));
    expect(await verifyAnswer(url)).toMatchObject(truncated);
  });
});

/** The chain's lines, in order. */
async function rowsOf(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ line: string }>("SELECT line FROM acp_audit_events ORDER BY seq")).rows.map(
      (r) => r.line,
    );
  } finally {
    await client.end();
  }
}

describe("the continued verification of the PostgreSQL chain, with the node's anchor", () => {
  const bed = anchorTestBed("acp-pg-trail-anchor-");

  /** A node's audit log on the bed's database, signing with the bed's key. */
  const writer = (): PostgresAuditLog =>
    createPostgresAuditLog(bed.store(), { clock: () => new Date(), signer: bed.privateKey });
  const append = async (log: PostgresAuditLog, n: number, tag: string): Promise<void> => {
    for (let i = 0; i < n; i++) await log.append({ event_type: "policy_evaluated", tool: `${tag}_${i}` });
  };

  /** The bed's store, recording from which `seq` each page of the chain is read. */
  const counted = (from: number[]): PostgresStore => {
    const store = bed.store();
    return {
      ...store,
      url: store.url,
      closed: store.closed,
      query: (text, values) => {
        if (text.includes("FROM acp_audit_events WHERE seq >")) from.push(Number((values as unknown[])[0]));
        return store.query(text, values);
      },
    };
  };

  it("continues while the anchor lags behind a newer checkpoint, and verifies whole against it once its row is changed", async () => {
    const anchorPath = bed.anchorPath();
    const log = writer();
    await append(log, 3, "a");
    await log.checkpoint(); // row 4: this node's anchor
    const row4 = await bed.query("SELECT line FROM acp_audit_events WHERE seq = 4", []);
    writeFileSync(anchorPath, `${(row4.rows[0] as { line: string }).line}\n`);
    markPostgresAnchored(anchorPath);
    await append(log, 3, "b");
    await log.checkpoint(); // row 8: another node's, not adopted yet
    const pages: number[] = [];
    const trail = createPostgresAuditTrail(counted(pages), { publicKey: bed.publicKey, anchorPath });
    expect(await trail.verify()).toMatchObject({ ok: true, count: 8, checkpoints: 2 });
    await append(log, 2, "c");
    expect(await trail.verify()).toMatchObject({ ok: true, count: 10 });
    expect(pages).toEqual([0, 8]); // the rows after the last verified one, not the chain again
    await log.close();

    // the anchor's row rewritten (row 3's line in its place): the chain no longer holds the anchor
    await bed.query(
      "UPDATE acp_audit_events SET line = (SELECT line FROM acp_audit_events WHERE seq = 3) WHERE seq = 4",
      [],
    );
    const anchor = readFileSync(anchorPath, "utf8").trim();
    const found = await trail.verify();
    expect(found.ok).toBe(false);
    expect(found).toEqual(await verifyPostgresAuditChain(bed.store(), { publicKey: bed.publicKey, anchor }));
    expect(pages[2]).toBe(0); // verified whole
  });
});
