/**
 * The PostgreSQL audit chain had no anchor: whoever could write the database (not the nodes' signing
 * key) could rewrite history, drop the checkpoints the rewrite broke, and the next node signed a
 * checkpoint over the forgery, after which `acp audit verify` said intact. Now each node keeps the latest
 * signed checkpoint it wrote or verified in its home and refuses (`audit_anchor_mismatch`) to start, or to
 * sign, on a chain that no longer holds it; several nodes still write one chain, and a node's first start
 * on an existing database adopts the newest checkpoint that verifies with the key.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAuditLine, sealAuditLine, type AuditEventV02 } from "@acp/core";
import {
  createPostgresAuditLog,
  legacyPostgresAuditAnchorPath,
  openPostgresStore,
  type PostgresAuditLog,
} from "@acp/store";
import { openPostgresStores, openServerStores, type ServerStores, type ServiceKeyPair } from "@acp/server";
import { createTestDatabase } from "../../../store/test/postgres/test-database.js";
import { testKeys } from "../harness.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const clean of cleanups.reverse()) await clean();
});

async function freshDatabase(): Promise<string> {
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  return db.url;
}

function freshHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-pg-anchor-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function open(url: string, home: string, keys: ServiceKeyPair, log?: (line: string) => void): Promise<ServerStores> {
  return openServerStores({
    storageUrl: url,
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    clock: () => new Date(),
    keys,
    onError: () => undefined,
    ...(log !== undefined ? { log } : {}),
  });
}

/** The node's audit log as the PostgreSQL one it is (to write a checkpoint now). */
const logOf = (stores: ServerStores): PostgresAuditLog => stores.auditLog as PostgresAuditLog;

/** The anchor file a node keeps in its home, as its line (the only `audit-postgres-*.checkpoint` there). */
function anchorOf(home: string): string {
  const names = readdirSync(home).filter((n) => /^audit-postgres-[0-9a-f]{16}\.checkpoint$/.test(n));
  expect(names).toHaveLength(1);
  return readFileSync(join(home, names[0] as string), "utf8").trim();
}

async function rows(url: string): Promise<{ seq: number; line: string; event_type: string }[]> {
  const store = await openPostgresStore(url);
  try {
    return (
      await store.query<{ seq: number; line: string; event_type: string }>(
        "SELECT seq, line, event_type FROM acp_audit_events ORDER BY seq",
      )
    ).rows;
  } finally {
    await store.close();
  }
}

/**
 * The attack: every `deny` becomes `accept`, the chain re-sealed from line 1 with the checkpoints the
 * rewrite broke left out, and the table replaced by it. Needs write access to the database only.
 */
async function launder(url: string): Promise<number> {
  const store = await openPostgresStore(url);
  try {
    const old = (await store.query<{ line: string }>("SELECT line FROM acp_audit_events ORDER BY seq")).rows;
    let previous: string | null = null;
    const forged: AuditEventV02[] = [];
    const lines: string[] = [];
    for (const { line } of old) {
      const parsed = parseAuditLine(line);
      if (!parsed.ok || parsed.value.event_type === "checkpoint") continue;
      const { event_hash, ...body } = parsed.value;
      void event_hash; // sealed again below
      const sealed = sealAuditLine({
        ...body,
        decision: body.decision === "deny" ? "accept" : body.decision,
        previous_event_hash: previous,
      });
      previous = sealed.event.event_hash;
      forged.push(sealed.event);
      lines.push(sealed.line);
    }
    await store.transaction(async (client) => {
      await client.query("DELETE FROM acp_audit_events");
      for (const [i, event] of forged.entries()) {
        await client.query(
          `INSERT INTO acp_audit_events
             (seq, event_hash, previous_event_hash, since_checkpoint, event_type, request_id, timestamp, line)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            i + 1,
            event.event_hash,
            event.previous_event_hash,
            i + 1,
            event.event_type,
            event.request_id,
            event.timestamp,
            lines[i],
          ],
        );
      }
    });
    return forged.length;
  } finally {
    await store.close();
  }
}

const event = (decision: "accept" | "deny", tool: string) =>
  ({ event_type: "policy_evaluated", tool, decision }) as const;

describe("a node's anchor on the PostgreSQL audit chain", () => {
  it("refuses to start on a chain rewritten with its checkpoints dropped, and signs nothing over it", async () => {
    const url = await freshDatabase();
    const home = freshHome();
    const keys = testKeys();
    const node = await open(url, home, keys);
    await node.auditLog.append(event("deny", "delete_repo"));
    await node.auditLog.append(event("accept", "read_file"));
    await node.close(); // the final signed checkpoint, line 3
    expect(anchorOf(home)).toBe((await rows(url))[2]?.line);

    expect(await launder(url)).toBe(2);
    const refused = open(url, home, keys);
    await expect(refused).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
    await expect(refused).rejects.toThrow(/no longer has row 3.*acp audit verify/);
    // what else reads the same, for whoever restored the database or copied a home: and what to do then
    await expect(refused).rejects.toThrow(
      /restored from a backup older than that checkpoint, or emptied, reads the same.*a home copied from a node of another database of the same name on a clone of this cluster.*move that file and its marker \S+\.anchored aside/,
    );
    // nothing signed the forgery: it has no checkpoint
    expect((await rows(url)).map((r) => r.event_type)).toEqual(["policy_evaluated", "policy_evaluated"]);
  });

  it("a running node refuses to sign a checkpoint over a chain rewritten under it", async () => {
    const url = await freshDatabase();
    const home = freshHome();
    const keys = testKeys();
    const node = await open(url, home, keys);
    await node.auditLog.append(event("deny", "delete_repo"));
    await logOf(node).checkpoint();
    await node.auditLog.append(event("accept", "read_file"));
    await launder(url);
    await expect(logOf(node).checkpoint()).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
    // and, as the file log, takes nothing more until someone looks
    await expect(node.auditLog.append(event("accept", "read_more"))).rejects.toMatchObject({
      code: "audit_anchor_mismatch",
    });
    await expect(node.close()).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
    expect((await rows(url)).some((r) => r.event_type === "checkpoint")).toBe(false);
  });

  it("several nodes write one chain: each signs after the others' checkpoints, and the anchors move forward", async () => {
    const url = await freshDatabase();
    const keys = testKeys();
    const homeA = freshHome();
    const homeB = freshHome();
    const a = await open(url, homeA, keys);
    const b = await open(url, homeB, keys);
    await a.auditLog.append(event("accept", "a1"));
    await b.auditLog.append(event("accept", "b1"));
    await logOf(a).checkpoint(); // line 3: A's anchor
    await b.auditLog.append(event("accept", "b2"));
    await logOf(b).checkpoint(); // line 5: B's, after A's
    await a.auditLog.append(event("deny", "a2"));
    await logOf(a).checkpoint(); // line 7: A signs after B's checkpoint
    await b.auditLog.append(event("accept", "b3"));
    await b.close(); // line 9
    await a.close(); // no events after line 9: no checkpoint
    const all = await rows(url);
    const checkpoints = all.filter((r) => r.event_type === "checkpoint").map((r) => r.seq);
    expect(checkpoints).toEqual([3, 5, 7, 9]);
    expect(anchorOf(homeB)).toBe(all[8]?.line);
    // A's close wrote nothing after B's checkpoint; A moves to it when it next checks
    const again = await open(url, homeA, keys);
    expect(anchorOf(homeA)).toBe(all[8]?.line);
    const verified = await again.audit.verify();
    expect(verified).toMatchObject({ ok: true, count: 9, signaturesChecked: true });
    await again.close();
  });

  it("a node's first start on an existing database adopts the newest checkpoint, and holds the chain to it", async () => {
    const url = await freshDatabase();
    const keys = testKeys();
    const first = await open(url, freshHome(), keys);
    await first.auditLog.append(event("deny", "delete_repo"));
    await logOf(first).checkpoint(); // line 2
    await first.auditLog.append(event("accept", "read_file"));
    await first.close(); // line 4
    const home = freshHome();
    const joined = await open(url, home, keys);
    expect(anchorOf(home)).toBe((await rows(url))[3]?.line);
    await joined.close();

    await launder(url);
    await expect(open(url, home, keys)).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
  });

  it("a checkpoint of another key is not adopted", async () => {
    const url = await freshDatabase();
    const keys = testKeys();
    const node = await open(url, freshHome(), keys);
    await node.auditLog.append(event("accept", "read_file"));
    await node.close(); // line 2, this key
    // a node with other keys wrote lines 3 and 4 (before the key check refused such nodes)
    const store = await openPostgresStore(url);
    const rogue = createPostgresAuditLog(store, { clock: () => new Date(), signer: testKeys().privateKey });
    await rogue.append(event("accept", "read_b"));
    await rogue.close();
    await store.close();
    const home = freshHome();
    const joined = await open(url, home, keys);
    expect(anchorOf(home)).toBe((await rows(url))[1]?.line);
    await joined.close();
  });

  it("between its own checkpoints a node adopts another node's, so dropping that one is refused here too", async () => {
    const url = await freshDatabase();
    const keys = testKeys();
    const homeA = freshHome();
    const told: Error[] = [];
    // A writes no checkpoint of its own: its anchor can only come from B's, through the periodic check
    const a = await openPostgresStores({
      url,
      clock: () => new Date(),
      auditSigner: keys.privateKey,
      auditPublicKey: keys.publicKey,
      home: homeA,
      auditAnchorCheckMs: 20,
      onError: (err) => told.push(err),
    });
    cleanups.push(() => a.close().catch(() => undefined));
    await a.auditLog.append(event("deny", "delete_repo"));
    const b = await open(url, freshHome(), keys);
    await b.auditLog.append(event("accept", "read_file"));
    await logOf(b).checkpoint(); // line 3, B's
    const checkpointOfB = (await rows(url))[2]?.line;
    while (readdirSync(homeA).every((n) => !n.endsWith(".checkpoint")) || anchorOf(homeA) !== checkpointOfB)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await b.close(); // line 4 only if events followed line 3: none, so B's checkpoint is still the newest

    await launder(url); // B's checkpoint dropped, the deny rewritten
    while (a.unavailable?.() == null) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(a.unavailable?.()).toMatchObject({ code: "audit_anchor_mismatch" });
    expect(await a.ready()).toBe(false);
    expect(told.some((e) => (e as { code?: string }).code === "audit_anchor_mismatch")).toBe(true);
    await expect(a.auditLog.append(event("accept", "more"))).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
    expect((await rows(url)).some((r) => r.event_type === "checkpoint")).toBe(false);
  });

  it("a first start on a chain with rows says it verified them and where it anchored; later starts and an empty chain say nothing", async () => {
    const url = await freshDatabase();
    const keys = testKeys();
    const said: string[] = [];
    const homeA = freshHome();
    const first = await open(url, homeA, keys, (line) => said.push(line));
    expect(said).toEqual([]); // an empty chain: nothing found, nothing to say
    await first.auditLog.append(event("deny", "delete_repo"));
    await logOf(first).checkpoint(); // row 2
    await first.auditLog.append(event("accept", "read_file"));
    await first.auditLog.flush(); // row 3: after the checkpoint, unsigned
    const homeB = freshHome();
    const joined = await open(url, homeB, keys, (line) => said.push(line));
    expect(said).toHaveLength(2);
    // before the verification, which on a long chain takes a while: said first
    expect(said[0]).toMatch(
      /^this home has no anchor \(.*audit-postgres-[0-9a-f]{16}\.checkpoint\) for the audit chain in PostgreSQL, which holds 3 rows: verifying it from row 1 before anchoring it and starting/,
    );
    expect(said[1]).toMatch(
      /^the audit chain in PostgreSQL held 3 rows and this home no anchor for it \(.*audit-postgres-[0-9a-f]{16}\.checkpoint\): verified from row 1/,
    );
    expect(said[1]).toContain(
      "anchored at its newest checkpoint signed with this home's key, row 2 (1 row after it, unsigned when found",
    );
    expect(said[1]).toContain(
      "expected on this node's first start on this database, otherwise find out why the anchor was missing",
    );
    expect(said[1]).toContain(homeB);
    await joined.close();
    await first.close();
    said.length = 0;
    const again = await open(url, homeB, keys, (line) => said.push(line)); // its anchor is there now
    expect(said).toEqual([]);
    await again.close();
  });

  it("a home holding its anchor under the URL-derived name of before moves it at start, says so, and keeps it", async () => {
    const url = await freshDatabase();
    const keys = testKeys();
    const home = freshHome();
    const first = await open(url, home, keys);
    await first.auditLog.append(event("deny", "delete_repo"));
    await logOf(first).checkpoint();
    await first.close();
    const held = anchorOf(home);
    // the anchor itself, not the record of which database it is for (audit-postgres-<id>.database, since 742e991)
    const [name] = readdirSync(home).filter((n) => /^audit-postgres-[0-9a-f]{16}\.checkpoint$/.test(n));
    const legacy = legacyPostgresAuditAnchorPath(home, url);
    renameSync(join(home, name as string), legacy); // as the version before this one named it
    const said: string[] = [];
    const again = await open(url, home, keys, (line) => said.push(line));
    expect(said).toEqual([`moved this home's audit anchor ${legacy} to ${join(home, name as string)}`]);
    expect(existsSync(legacy)).toBe(false);
    expect(anchorOf(home)).toBe(held); // no first use: the anchor was kept, not found again
    await again.close();
  });

  it("a start on rows before the chain's first checkpoint says nothing: no node keeps an anchor yet, none was lost", async () => {
    const url = await freshDatabase();
    const store = await openPostgresStore(url);
    const unsigned = createPostgresAuditLog(store, { clock: () => new Date() }); // no signer: no checkpoint
    await unsigned.append(event("accept", "read_b"));
    await unsigned.close();
    await store.close();
    const said: string[] = [];
    const node = await open(url, freshHome(), testKeys(), (line) => said.push(line));
    expect(said).toEqual([]);
    await node.close();
  });
});
