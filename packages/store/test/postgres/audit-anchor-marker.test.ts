/**
 * A node's anchor on the PostgreSQL chain deleted with the chain cut back. The anchor is a file in the
 * node's home (`audit-postgres-<id>.checkpoint`); before 28 Nov 2026 a node that found none treated it as a
 * first start: it verified the rows left from row 1, anchored at the newest checkpoint left (or at nothing,
 * for a chain emptied whole) and went on, so the cut was vouched for. Now the anchor's marker
 * (`audit-postgres-<id>.anchored`, written once the anchor is) says it existed, and a node refuses
 * (`audit_anchor_missing`) a database whose anchor is gone while the marker is there, as the file log does.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createPostgresAuditLog,
  openPostgresAuditAnchor,
  postgresAnchoredMarkerPathOf,
  type PostgresStore,
} from "@acp/store";
import { anchorTestBed } from "./anchor-test-bed.js";

const bed = anchorTestBed("acp-pg-marker-");
let store: PostgresStore;
beforeAll(() => {
  store = bed.store();
});
const { privateKey, publicKey, query } = bed;
const anchorPath = (): string => bed.anchorPath();

/** A node that writes `n` events with a checkpoint every 3, and stops (its final checkpoint). */
async function runNode(path: string, n: number): Promise<void> {
  const anchor = await openPostgresAuditAnchor(query, { path, publicKey });
  const log = createPostgresAuditLog(store, {
    clock: () => new Date(),
    signer: privateKey,
    checkpointEvery: 3,
    anchor,
  });
  for (let i = 0; i < n; i++) await log.append({ event_type: "policy_evaluated", tool: `t${i}`, decision: "deny" });
  await log.close();
}

async function checkpointRows(): Promise<number[]> {
  const { rows } = await store.query<{ seq: number }>(
    "SELECT seq FROM acp_audit_events WHERE event_type = 'checkpoint' ORDER BY seq",
  );
  return rows.map((r) => r.seq);
}

describe("a node's anchor on the PostgreSQL chain deleted with the chain cut back", () => {
  it("names the marker beside the anchor: the anchor's name with .anchored for .checkpoint", () => {
    expect(postgresAnchoredMarkerPathOf("/h/audit-postgres-0123456789abcdef.checkpoint")).toBe(
      "/h/audit-postgres-0123456789abcdef.anchored",
    );
    expect(postgresAnchoredMarkerPathOf("/h/kept")).toBe("/h/kept.anchored");
  });

  it("the marker is written with the node's first anchor, not before", async () => {
    const path = anchorPath();
    const marker = postgresAnchoredMarkerPathOf(path);
    const anchor = await openPostgresAuditAnchor(query, { path, publicKey });
    const log = createPostgresAuditLog(store, {
      clock: () => new Date(),
      signer: privateKey,
      checkpointEvery: 3,
      anchor,
    });
    await log.append({ event_type: "policy_evaluated", tool: "a", decision: "deny" });
    expect(existsSync(path) || existsSync(marker)).toBe(false); // no checkpoint yet: nothing anchored
    await log.close(); // the final checkpoint: the anchor, then its marker
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(marker, "utf8")).toContain("anchor_missing");
  });

  it("refuses (audit_anchor_missing) a chain cut back to an earlier checkpoint whose anchor was deleted, and anchors nothing", async () => {
    const path = anchorPath();
    await runNode(path, 7); // checkpoints at rows 4, 8 and (final) 10
    expect(await checkpointRows()).toEqual([4, 8, 10]);
    // someone with the database and the home, not the key: the chain cut to its first checkpoint, a genuine
    // signed row that the rows before still lead to, and the anchor (row 10) deleted
    await store.query("DELETE FROM acp_audit_events WHERE seq > 4");
    rmSync(path);
    const refused = openPostgresAuditAnchor(query, { path, publicKey });
    await expect(refused).rejects.toMatchObject({ code: "audit_anchor_missing" });
    await expect(refused).rejects.toThrow(
      `this node's anchor for it (${path}) is missing, though ${postgresAnchoredMarkerPathOf(path)} records that it had one`,
    );
    await expect(refused).rejects.toThrow(/put the anchor back.*remove .*\.anchored/);
    expect(existsSync(path)).toBe(false); // the cut is not anchored
  });

  it("refuses a chain emptied whole and its anchor deleted: the chain is not started again", async () => {
    const path = anchorPath();
    await runNode(path, 2);
    await store.query("DELETE FROM acp_audit_events");
    rmSync(path);
    await expect(openPostgresAuditAnchor(query, { path, publicKey })).rejects.toMatchObject({
      code: "audit_anchor_missing",
    });
  });

  it("writes the marker at open beside an anchor written before markers, so its deletion is caught from then on", async () => {
    const path = anchorPath();
    await runNode(path, 4);
    rmSync(postgresAnchoredMarkerPathOf(path)); // a home of a version before markers
    await openPostgresAuditAnchor(query, { path, publicKey });
    expect(existsSync(postgresAnchoredMarkerPathOf(path))).toBe(true);
  });

  it("once the marker is removed too, the next start verifies the chain from row 1 and anchors it again", async () => {
    const path = anchorPath();
    await runNode(path, 4); // checkpoints at rows 4 and (final) 6
    rmSync(path);
    rmSync(postgresAnchoredMarkerPathOf(path)); // an operator who knows why the anchor is gone (or moved both aside)
    const anchor = await openPostgresAuditAnchor(query, { path, publicKey });
    expect(anchor.firstAnchor).toEqual({ rows: 6, checkpointRow: 6, checkpoints: 2 });
    expect(existsSync(postgresAnchoredMarkerPathOf(path))).toBe(true);
  });
});
