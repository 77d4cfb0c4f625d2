/**
 * `acp audit verify --storage-url` after the database behind the URL was moved (a dump restored on another
 * server at the same address). The home's anchor is named from the database reached, so the new one has
 * none: verify used to check the chain with no anchor (a warning, exit 0) and a dump whose last rows were
 * cut passed. It now reads the home's record of which database the connection last anchored (as acp serve
 * does) and verifies against that database's anchor, saying so: the cut fails (exit 3), a faithful move
 * passes. Real servers: the run's PostgreSQL and a cluster of this file's own behind one loopback address.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ed25519KeyPair } from "@acp/core";
import { openServerStores } from "@acp/server";
import { postgresConnectionRecordPath, postgresConnectionTarget } from "@acp/store";
import {
  atPort,
  restoreDump,
  sqlOn,
  startOwnCluster,
  switchableAddress,
  type OwnCluster,
  type SwitchableAddress,
} from "../../../store/test/postgres/moved-cluster.js";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "../../../store/test/postgres/test-database.js";
import { envFor, fixtureHome, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";

const root = tempRoot("audit-verify-moved-database");
const dbs: TestDatabase[] = [];
let other: OwnCluster | undefined;
let address: SwitchableAddress | undefined;

beforeAll(async () => {
  other = await startOwnCluster();
  address = await switchableAddress(Number(new URL(postgresTestUrl()).port));
}, 600_000);
afterAll(async () => {
  await address?.close();
  for (const db of dbs) await db.drop();
  await other?.stop();
  root.cleanup();
}, 120_000);

/**
 * A node of `home` on a new database reached through the switchable address (a few events and its final
 * checkpoint, anchored in the home); the database dumped and restored on the other cluster, `cut` rows from
 * the chain's end there, and the address pointed at it. The URL, unchanged.
 */
async function movedUnderTheNode(home: string, key: Ed25519KeyPair, cut: boolean): Promise<string> {
  const db = await createTestDatabase();
  dbs.push(db);
  const forward = address as SwitchableAddress;
  const cluster = other as OwnCluster;
  forward.pointAt(Number(new URL(postgresTestUrl()).port));
  const url = atPort(db.url, forward.port);
  const stores = await openServerStores({
    storageUrl: url,
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"),
    clock: () => new Date(),
    keys: key,
  });
  for (const tool of ["read_a", "send_b", "read_c"])
    await stores.auditLog.append({ event_type: "policy_evaluated", tool, decision: "accept" });
  await stores.close(); // the final checkpoint, this home's anchor
  await restoreDump(db.url, cluster.url);
  if (cut) {
    await sqlOn(
      atPort(db.url, cluster.port),
      "DELETE FROM acp_audit_events WHERE seq >= (SELECT max(seq) FROM acp_audit_events WHERE event_type = 'checkpoint')",
    );
  }
  forward.pointAt(cluster.port);
  return url;
}

/** The home's PostgreSQL anchors and records, with their contents: verify must change none of them. */
function anchorFiles(home: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(home)
    .filter((n) => n.startsWith("audit-postgres-"))
    .sort())
    out[name] = readFileSync(join(home, name), "utf8");
  return out;
}

const NOTE =
  /note: the storage URL \(`acp@127\.0\.0\.1:\d+\/acp_t_[0-9a-f]+`\) now reaches another database \(cluster (\d+), database `acp_t_[0-9a-f]+`, schema `public`\) than the one this home last anchored through it \(cluster (?!\1)\d+, [^)]*\): verified against that database's anchor (\S+audit-postgres-[0-9a-f]{16}\.checkpoint), so rows cut/;

describe("acp audit verify --storage-url on a URL that now reaches another database", () => {
  it("a dump restored on a new server, its last rows cut: verified against the old database's anchor, it fails (exit 3) and says why", async () => {
    const { home, key } = fixtureHome(root.dir);
    const url = await movedUnderTheNode(home, key, true);
    const before = anchorFiles(home);
    const env = envFor(home);

    const r = await runCli(["audit", "verify", "--storage-url", url], { env });
    expect(r.code).toBe(3);
    const note = NOTE.exec(r.stderr);
    expect(note).not.toBeNull();
    expect(existsSync(note?.[2] ?? "")).toBe(true);
    expect(r.stderr).toContain("truncated_after_checkpoint");
    expect(r.stderr).toContain("acp serve --accept-moved-database");
    expect(r.stdout).not.toContain("intact");

    const json = await runCli(["audit", "verify", "--storage-url", url, "--json"], { env });
    expect(json.code).toBe(3);
    const out = JSON.parse(json.stdout) as { valid: boolean; anchor_file: string | null; problem: { code: string } };
    expect(out.valid).toBe(false);
    expect(out.anchor_file).toBe(note?.[2]);
    expect(out.problem.code).toBe("truncated_after_checkpoint");
    expect(anchorFiles(home)).toEqual(before); // read-only: nothing carried, nothing recorded
  });

  it("a database moved on purpose: it holds the old anchor's checkpoint, so it verifies (exit 0), the move named", async () => {
    const { home, key } = fixtureHome(root.dir);
    const url = await movedUnderTheNode(home, key, false);
    const before = anchorFiles(home);

    const r = await runCli(["audit", "verify"], { env: { ...envFor(home), ACP_STORAGE_URL: url } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(NOTE);
    expect(r.stdout).toMatch(/intact: \d+ events/);
    expect(r.stdout).toMatch(/anchor: the log reaches the anchor's checkpoint \(line \d+\)/);
    expect(r.stderr).not.toContain("PostgreSQL keeps no anchor");
    expect(anchorFiles(home)).toEqual(before);
  });

  it("moved, accepted, written on, then the URL put back on the old server: verified against the anchor last written, not the old database's own", async () => {
    const { home, key } = fixtureHome(root.dir);
    const url = await movedUnderTheNode(home, key, false);
    const node = {
      storageUrl: url,
      statePath: join(home, "state.db"),
      auditPath: join(home, "audit.jsonl"),
      clock: () => new Date(),
      keys: key,
    };
    const moved = await openServerStores({ ...node, acceptMovedDatabase: true });
    await moved.auditLog.append({ event_type: "policy_evaluated", tool: "send_d", decision: "accept" });
    await moved.close(); // a later checkpoint, anchored for the new database; the record names it
    (address as SwitchableAddress).pointAt(Number(new URL(postgresTestUrl()).port)); // the old server, its own anchor older

    const r = await runCli(["audit", "verify", "--storage-url", url], { env: envFor(home) });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(NOTE);
    expect(r.stderr).toContain("truncated_after_checkpoint");
  });

  it("the home's record of the connection cannot be read: refused (exit 1), not verified without an anchor", async () => {
    const { home, key } = fixtureHome(root.dir);
    const url = await movedUnderTheNode(home, key, true);
    const record = postgresConnectionRecordPath(home, await postgresConnectionTarget(url));
    expect(existsSync(record)).toBe(true);
    writeFileSync(record, "not json\n");

    const r = await runCli(["audit", "verify", "--storage-url", url], { env: envFor(home) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("record of which database the storage URL reached");
    expect(r.stdout).not.toContain("intact");
  });
});
