/**
 * `createPostgresAuditLog` with a node's anchor (`openPostgresAuditAnchor`): the checkpoints it signs on
 * its own (every `checkpointEvery` events, also on the optimistic way) are checked against the anchor in
 * their transaction, two nodes appending at once keep one chain and their anchors, and a chain that no
 * longer links to a node's signed checkpoint is refused before anything is signed over it.
 */
import { generateKeyPairSync } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createAuditEventBody,
  createCheckpointBody,
  createCheckpointInput,
  parseAuditLine,
  sealAuditLine,
  signCheckpoint,
} from "@acp/core";
import {
  ADVISORY_LOCK,
  createPostgresAuditLog,
  openPostgresAuditAnchor,
  postgresFirstAnchorMessage,
  verifyPostgresAuditChain,
  type PostgresStore,
} from "@acp/store";
import { anchorTestBed } from "./anchor-test-bed.js";

const bed = anchorTestBed("acp-pg-anchor-");
let store: PostgresStore;
beforeAll(() => {
  store = bed.store();
});
const { privateKey, publicKey, query } = bed;
const anchorPath = (): string => bed.anchorPath();

async function node(path: string) {
  const anchor = await openPostgresAuditAnchor(query, { path, publicKey });
  return createPostgresAuditLog(store, {
    clock: () => new Date(),
    signer: privateKey,
    checkpointEvery: 3,
    optimistic: true,
    anchor,
  });
}

const event = (tool: string) => ({ event_type: "policy_evaluated", tool, decision: "deny" }) as const;

async function lines(): Promise<{ seq: number; line: string; event_type: string }[]> {
  return (
    await store.query<{ seq: number; line: string; event_type: string }>(
      "SELECT seq, line, event_type FROM acp_audit_events ORDER BY seq",
    )
  ).rows;
}

describe("postgres audit log with a node's anchor", () => {
  it("two optimistic nodes appending at once keep one signed chain; each anchor is a checkpoint the chain holds", async () => {
    const pathA = anchorPath();
    const pathB = anchorPath();
    const a = await node(pathA);
    const b = await node(pathB);
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).append(event(`t${i}`))));
    await a.close();
    await b.close();
    expect(await verifyPostgresAuditChain(store, { publicKey })).toMatchObject({ ok: true, problem: null });
    const held = new Map((await lines()).map((r) => [r.line, r.event_type]));
    for (const path of [pathA, pathB]) expect(held.get(readFileSync(path, "utf8").trim())).toBe("checkpoint");
  });

  it("the next checkpoint due is refused when an event before the anchor's checkpoint was rewritten and the chain hashed again", async () => {
    const path = anchorPath();
    const log = await node(path);
    for (const tool of ["a", "b", "c"]) await log.append(event(tool)); // line 4: the checkpoint, the anchor
    await log.append(event("d"));
    // someone with write access to the table: "deny" becomes "accept" on line 1, every line hashed again,
    // the checkpoint the edit broke left out
    const rows = (await lines()).filter((r) => r.event_type !== "checkpoint");
    let previous: string | null = null;
    await store.query("DELETE FROM acp_audit_events");
    for (const [i, r] of rows.entries()) {
      const parsed = parseAuditLine(r.line);
      if (!parsed.ok) throw new Error("unreadable line");
      const { event_hash, ...body } = parsed.value;
      void event_hash; // sealed again below
      const sealed = sealAuditLine({
        ...body,
        decision: i === 0 ? "accept" : body.decision,
        previous_event_hash: previous,
      });
      await store.query(
        `INSERT INTO acp_audit_events (seq, event_hash, previous_event_hash, since_checkpoint, event_type, request_id, timestamp, line)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          i + 1,
          sealed.event.event_hash,
          sealed.event.previous_event_hash,
          i + 1,
          body.event_type,
          null,
          body.timestamp,
          sealed.line,
        ],
      );
      previous = sealed.event.event_hash;
    }
    // two more events: the checkpoint they make due is refused with them, and nothing is signed
    await expect(Promise.all([log.append(event("e")), log.append(event("f"))])).rejects.toMatchObject({
      code: "audit_anchor_mismatch",
    });
    expect((await lines()).some((r) => r.event_type === "checkpoint")).toBe(false);
    await expect(log.append(event("g"))).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
  });

  it("a first start (no anchor) verifies the whole chain: rows rewritten under a re-sealed signed checkpoint are refused", async () => {
    const writer = await node(anchorPath());
    for (const tool of ["a", "b", "c", "d", "e"]) await writer.append(event(tool));
    await writer.close(); // checkpoints at rows 4 and 7
    expect((await lines()).filter((r) => r.event_type === "checkpoint").map((r) => r.seq)).toEqual([4, 7]);
    // row 1 "deny" -> "accept", every row sealed again, the checkpoints too: their signed bodies are
    // unchanged (each still verifies with the key on its own) but no longer match the rows they cover
    const rows = await lines();
    let previous: string | null = null;
    for (const r of rows) {
      const parsed = parseAuditLine(r.line);
      if (!parsed.ok) throw new Error("unreadable line");
      const { event_hash, ...body } = parsed.value;
      void event_hash; // sealed again below
      const sealed = sealAuditLine({
        ...body,
        decision: r.seq === 1 ? "accept" : body.decision,
        previous_event_hash: previous,
      });
      await store.query(
        "UPDATE acp_audit_events SET line = $2, event_hash = $3, previous_event_hash = $4 WHERE seq = $1",
        [r.seq, sealed.line, sealed.event.event_hash, sealed.event.previous_event_hash],
      );
      previous = sealed.event.event_hash;
    }
    const path = anchorPath();
    const refused = openPostgresAuditAnchor(query, { path, publicKey });
    await expect(refused).rejects.toMatchObject({ code: "audit_anchor_missing" });
    await expect(refused).rejects.toThrow(
      /row 4 does not verify \(checkpoint_mismatch\).*acp audit verify --storage-url/,
    );
    expect(existsSync(path)).toBe(false); // nothing adopted
  });

  it("a first start refuses a chain with a row missing, and adopts the newest checkpoint of an intact one", async () => {
    const writer = await node(anchorPath());
    for (const tool of ["a", "b", "c", "d", "e"]) await writer.append(event(tool));
    await writer.close();
    const fresh = anchorPath();
    await openPostgresAuditAnchor(query, { path: fresh, publicKey });
    expect(readFileSync(fresh, "utf8").trim()).toBe((await lines()).find((r) => r.seq === 7)?.line);
    await store.query("DELETE FROM acp_audit_events WHERE seq = 2");
    const refused = openPostgresAuditAnchor(query, { path: anchorPath(), publicKey });
    await expect(refused).rejects.toMatchObject({ code: "audit_anchor_missing" });
    await expect(refused).rejects.toThrow("its row 2 is missing");
  });

  it("with no checkpoint yet, later syncs verify only the rows added since, and still see an earlier row changed", async () => {
    const unsigned = createPostgresAuditLog(store, { clock: () => new Date(), optimistic: true });
    for (const tool of ["a", "b"]) await unsigned.append(event(tool));
    await unsigned.close();
    const path = anchorPath();
    const anchor = await openPostgresAuditAnchor(query, { path, publicKey });
    expect(existsSync(path)).toBe(false); // nothing signed to hold yet
    const more = createPostgresAuditLog(store, { clock: () => new Date(), optimistic: true });
    await more.append(event("c"));
    await more.close();
    await anchor.sync(query);
    await store.query("UPDATE acp_audit_events SET line = replace(line, '\"deny\"', '\"accept\"') WHERE seq = 3");
    const refused = anchor.sync(query);
    await expect(refused).rejects.toMatchObject({ code: "audit_anchor_missing" });
    await expect(refused).rejects.toThrow("its row 3, verified before, was changed or removed");
  });

  it("a first use tells the rows before verifying them (at open only) and reports what it anchored at", async () => {
    const other = generateKeyPairSync("ed25519").privateKey;
    const foreign = createPostgresAuditLog(store, { clock: () => new Date(), signer: other, checkpointEvery: 2 });
    for (const tool of ["a", "b", "c"]) await foreign.append(event(tool));
    await foreign.close(); // rows 1-2, checkpoint 3, row 4, checkpoint 5: another key's
    const told: number[] = [];
    const path = anchorPath();
    const anchor = await openPostgresAuditAnchor(query, { path, publicKey, onFirstUse: (rows) => told.push(rows) });
    expect(told).toEqual([5]);
    expect(anchor.firstAnchor).toEqual({ rows: 5, checkpointRow: null, checkpoints: 2 });
    expect(postgresFirstAnchorMessage(path, { rows: 5, checkpointRow: null, checkpoints: 2 })).toContain(
      "not anchored: none of its 2 checkpoints verifies with this home's key",
    );
    const more = createPostgresAuditLog(store, { clock: () => new Date() });
    await more.append(event("d"));
    await more.close();
    await anchor.sync(query); // a later sync still without an anchor: verifies row 6, tells nothing
    expect(told).toEqual([5]);

    const own = await node(anchorPath()); // signs with the key
    for (const tool of ["e", "f"]) await own.append(event(tool));
    await own.close();
    const rows = await lines();
    const signed = rows.filter((r) => r.event_type === "checkpoint").at(-1)?.seq;
    const joined = await openPostgresAuditAnchor(query, { path: anchorPath(), publicKey });
    expect(joined.firstAnchor).toEqual({ rows: rows.length, checkpointRow: signed, checkpoints: 3 });
    await anchor.sync(query); // the first anchor adopts that checkpoint now
    const again = await openPostgresAuditAnchor(query, { path, publicKey, onFirstUse: (n) => told.push(n) });
    expect(told).toEqual([5]); // its anchor is there: no first use
    expect(again.firstAnchor).toBeNull();
  });

  it("a node stopped just after another node's checkpoint (no final one of its own) holds that checkpoint", async () => {
    const pathA = anchorPath();
    const a = await node(pathA);
    const first = await a.append(event("a")); // row 1; no checkpoint yet, so no anchor
    expect(existsSync(pathA)).toBe(false);
    // another node signs a checkpoint while A's close waits for the chain's lock (nodes stopped together)
    let closing: Promise<void> | undefined;
    await store.transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1, 0)", [ADVISORY_LOCK.audit]);
      closing = a.close();
      const waiting = async (): Promise<boolean> =>
        (
          await store.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
               AND classid::bigint = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
            [ADVISORY_LOCK.audit],
          )
        ).rows[0]?.n === 1;
      while (!(await waiting())) await new Promise((resolve) => setTimeout(resolve, 5));
      const timestamp = new Date().toISOString();
      const body = createCheckpointBody(first.event_hash, 1, timestamp);
      const input = createCheckpointInput({ body, signature: signCheckpoint(body, privateKey) });
      const placement = { id: "ae_other_node", timestamp, previousEventHash: first.event_hash };
      const sealed = sealAuditLine(createAuditEventBody(input, placement));
      await client.query(
        `INSERT INTO acp_audit_events
           (seq, event_hash, previous_event_hash, since_checkpoint, event_type, request_id, timestamp, line)
         VALUES (2, $1, $2, 0, 'checkpoint', $3, $4, $5)`,
        [sealed.event.event_hash, first.event_hash, sealed.event.request_id, timestamp, sealed.line],
      );
    });
    await closing;
    const rows = await lines();
    expect(rows.map((r) => r.event_type)).toEqual(["policy_evaluated", "checkpoint"]); // A wrote no final one
    expect(readFileSync(pathA, "utf8").trim()).toBe(rows[1]?.line);
  });
});
