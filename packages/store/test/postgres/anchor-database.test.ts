/**
 * The anchor is named from the database the connection reaches, so a dump restored into a new server at the
 * same address (its last rows cut) had no anchor in the home: the node's start there was a first start,
 * which verifies from row 1 and cannot tell rows cut from the end. The home now records which database each
 * connection reached: a start that finds the same connection reaching another database whose anchor the
 * home holds is refused (`audit_anchor_database_changed`, naming both); accepting the move carries that
 * anchor over, so a cut is still refused and a faithful move goes on. Real servers: the run's PostgreSQL
 * and a cluster of this file's own behind one loopback address.
 */
import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createPostgresAuditLog,
  describePostgresDatabase,
  openPostgresAuditAnchor,
  openPostgresStore,
  postgresAnchoredMarkerPathOf,
  postgresConnectionRecordPath,
  postgresConnectionTarget,
  resolvePostgresAuditAnchorPath,
  type AnchorQuery,
  type PostgresStore,
} from "@acp/store";
import {
  atPort,
  restoreDump,
  sqlOn,
  startOwnCluster,
  switchableAddress,
  type OwnCluster,
  type SwitchableAddress,
} from "./moved-cluster.js";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "./test-database.js";

const dirs: string[] = [];
const dbs: TestDatabase[] = [];
const { privateKey, publicKey } = generateKeyPairSync("ed25519");
let other: OwnCluster | undefined;
let address: SwitchableAddress | undefined;
const saved = process.env["PGDATABASE"];

beforeAll(async () => {
  other = await startOwnCluster();
  address = await switchableAddress(Number(new URL(postgresTestUrl()).port));
}, 600_000);
afterEach(() => {
  if (saved === undefined) delete process.env["PGDATABASE"];
  else process.env["PGDATABASE"] = saved;
});
afterAll(async () => {
  await address?.close();
  for (const db of dbs) await db.drop();
  await other?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}, 120_000);

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-pg-anchor-db-"));
  dirs.push(dir);
  return dir;
}

const runPort = (): number => Number(new URL(postgresTestUrl()).port);
const switched = (): SwitchableAddress => address as SwitchableAddress;

/** A new database on the run's server, and the URL that reaches it through the switchable address. */
async function database(): Promise<{ direct: string; url: string }> {
  const db = await createTestDatabase();
  dbs.push(db);
  switched().pointAt(runPort());
  return { direct: db.url, url: atPort(db.url, switched().port) };
}

async function withStore<T>(url: string, fn: (store: PostgresStore, query: AnchorQuery) => Promise<T>): Promise<T> {
  const store = await openPostgresStore(url);
  try {
    return await fn(store, (text, values) => store.query(text, values));
  } finally {
    await store.close();
  }
}

/** A node's start with `h` on `url` (the place resolved as acp serve does, the anchor opened on it). */
function start(h: string, url: string, acceptMovedDatabase = false) {
  return withStore(url, async (_, query) => {
    const place = await resolvePostgresAuditAnchorPath(h, url, query, { move: true, acceptMovedDatabase });
    const anchor = await openPostgresAuditAnchor(query, {
      path: place.path,
      publicKey,
      beforeWrite: place.recordDatabase,
    });
    return { place, anchor };
  });
}

/** A node of `h` writes five events with a checkpoint every three and its final one; the newest checkpoint's seq. */
async function writeChain(h: string, url: string): Promise<number> {
  return withStore(url, async (store, query) => {
    const place = await resolvePostgresAuditAnchorPath(h, url, query, { move: true });
    const log = createPostgresAuditLog(store, {
      clock: () => new Date(),
      signer: privateKey,
      checkpointEvery: 3,
      anchor: await openPostgresAuditAnchor(query, { path: place.path, publicKey, beforeWrite: place.recordDatabase }),
    });
    for (const tool of ["a", "b", "c", "d", "e"])
      await log.append({ event_type: "policy_evaluated", tool, decision: "deny" });
    await log.close();
    const newest = await store.query<{ n: number }>(
      "SELECT MAX(seq) AS n FROM acp_audit_events WHERE event_type = 'checkpoint'",
    );
    return Number(newest.rows[0]?.n);
  });
}

/** The database of `url` dumped and restored on the other cluster, and the address pointed there. */
async function moveToOtherCluster(direct: string): Promise<void> {
  const cluster = other as OwnCluster;
  await restoreDump(direct, cluster.url);
  switched().pointAt(cluster.port);
}

describe("a storage URL that now reaches another database", () => {
  it("a dump restored on a new server at the same address, its last rows cut, is refused, naming both", async () => {
    const { direct, url } = await database();
    const h = home();
    const checkpoint = await writeChain(h, url);
    const before = await withStore(url, (_, q) => resolvePostgresAuditAnchorPath(h, url, q));
    await moveToOtherCluster(direct);
    const moved = atPort(direct, (other as OwnCluster).port);
    await sqlOn(moved, `DELETE FROM acp_audit_events WHERE seq >= ${checkpoint}`); // the end of the chain cut

    // what the node did before: another database, no anchor for it, a first start that verifies and goes on
    const bare = home();
    const first = await start(bare, url);
    expect(first.anchor.firstAnchor?.rows).toBe(checkpoint - 1);

    const refused = start(h, url);
    await expect(refused).rejects.toMatchObject({ code: "audit_anchor_database_changed" });
    const message = ((await refused.catch((e: unknown) => e)) as Error).message;
    const after = await withStore(url, (_, q) => resolvePostgresAuditAnchorPath(h, url, q));
    expect(after.path).not.toBe(before.path);
    const connection = await postgresConnectionTarget(url);
    expect(message).toContain(`the storage URL (\`${connection}\`) now reaches another database`);
    expect(message).toContain(describePostgresDatabase(after.changed?.now ?? "?"));
    expect(message).toContain(describePostgresDatabase(after.changed?.before ?? "?"));
    expect(message).toMatch(/\(cluster \d+, database `acp_t_[0-9a-f]+`, schema `public`\) than the one/);
    expect(message).toContain(`whose anchor ${before.path} holds a signed checkpoint`);
    expect(message).toContain("--accept-moved-database");
    // a plain `acp audit verify --storage-url …` in this home checks against that anchor itself (de1fd3b)
    expect(message).toContain(
      "(`acp audit verify --storage-url …` in this home checks it against that anchor beforehand)",
    );
    expect(message).not.toContain("--anchor");
    // nothing was written: no anchor for the new database, the record still names the old one
    expect(existsSync(after.path)).toBe(false);
    expect(after.changed).toMatchObject({ connection, beforeAnchor: before.path, nowAnchor: after.path });
    expect(after.changed?.before).not.toBe(after.changed?.now);

    // accepted as moved: the old anchor is carried over, and the cut is refused against it
    const accepted = start(h, url, true);
    await expect(accepted).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
    expect(readFileSync(after.path, "utf8")).toBe(readFileSync(before.path, "utf8"));
    // and so is every later start, with or without the flag
    await expect(start(h, url)).rejects.toMatchObject({ code: "audit_anchor_mismatch" });
  });

  it("a faithful move, accepted once, is held to the carried anchor (no first start) and later starts need nothing", async () => {
    const { direct, url } = await database();
    const h = home();
    const checkpoint = await writeChain(h, url);
    await moveToOtherCluster(direct);
    await expect(start(h, url)).rejects.toMatchObject({ code: "audit_anchor_database_changed" });

    const accepted = await start(h, url, true);
    expect(accepted.place.changed).not.toBeNull();
    expect(accepted.place.carriedFrom).toBe(accepted.place.changed?.beforeAnchor);
    expect(accepted.anchor.firstAnchor).toBeNull(); // held at the carried checkpoint, not verified from row 1
    expect(readFileSync(accepted.place.path, "utf8")).toContain(`"count":${checkpoint - 1}`);

    const again = await start(h, url);
    expect(again.place.changed).toBeNull();
    expect(again.place.carriedFrom).toBeNull();
    expect(again.place.path).toBe(accepted.place.path);
  });

  it("a first start on a new home just works and writes nothing; its first anchor records the database", async () => {
    const { url } = await database();
    const h = home();
    const first = await start(h, url);
    expect(first.place.changed).toBeNull();
    expect(readdirSync(h)).toEqual([]); // an empty chain: no anchor, no record
    await writeChain(h, url);
    const record = postgresConnectionRecordPath(h, await postgresConnectionTarget(url));
    const names = readdirSync(h).sort();
    // the anchor, its marker (written with it) and the record
    const marker = postgresAnchoredMarkerPathOf(first.place.path);
    expect(names).toEqual([basename(first.place.path), basename(marker), basename(record)].sort());
    expect(JSON.parse(readFileSync(record, "utf8"))).toEqual({
      connection: await postgresConnectionTarget(url),
      database: expect.stringMatching(/^system \d+\|acp_t_[0-9a-f]+\|public$/) as unknown,
    });
  });

  it("a home holding an anchor and no record (kept before the record was) records at its next start, and is then held", async () => {
    const { direct, url } = await database();
    const h = home();
    await writeChain(h, url);
    const record = postgresConnectionRecordPath(h, await postgresConnectionTarget(url));
    rmSync(record);
    const again = await start(h, url);
    expect(again.anchor.firstAnchor).toBeNull();
    expect(existsSync(record)).toBe(true);
    await moveToOtherCluster(direct);
    await expect(start(h, url)).rejects.toMatchObject({ code: "audit_anchor_database_changed" });
  });

  it("where the old database's anchor is not in the home (moved aside) the new one is not refused, and is recorded", async () => {
    const { direct, url } = await database();
    const h = home();
    await writeChain(h, url);
    const record = postgresConnectionRecordPath(h, await postgresConnectionTarget(url));
    const old = JSON.parse(readFileSync(record, "utf8")) as { database: string };
    const anchors = readdirSync(h).filter((n) => n.endsWith(".checkpoint"));
    for (const name of anchors) renameSync(join(h, name), join(h, `${name}.aside`));
    await moveToOtherCluster(direct);
    const moved = await start(h, url);
    expect(moved.place.changed).toBeNull();
    expect(moved.anchor.firstAnchor).not.toBeNull(); // a first start there, as the operator chose
    const now = JSON.parse(readFileSync(record, "utf8")) as { database: string };
    expect(now.database).not.toBe(old.database);
  });

  it("one bare URL that PGDATABASE points at two databases is two connections: neither refuses the other", async () => {
    const a = await createTestDatabase();
    const b = await createTestDatabase();
    dbs.push(a, b);
    const server = new URL(postgresTestUrl());
    const bare = `postgres://${server.username}@${server.host}`;
    const h = home();
    process.env["PGDATABASE"] = new URL(a.url).pathname.slice(1);
    const onA = await writeChain(h, bare);
    process.env["PGDATABASE"] = new URL(b.url).pathname.slice(1);
    const onB = await start(h, bare);
    expect(onB.place.changed).toBeNull();
    process.env["PGDATABASE"] = new URL(a.url).pathname.slice(1);
    const backOnA = await start(h, bare);
    expect(backOnA.place.changed).toBeNull();
    expect(backOnA.anchor.firstAnchor).toBeNull();
    expect(onA).toBeGreaterThan(0);
  });

  it("an unreadable record is refused (not read as no record); accepting replaces it", async () => {
    const { url } = await database();
    const h = home();
    await start(h, url);
    const record = postgresConnectionRecordPath(h, await postgresConnectionTarget(url));
    writeFileSync(record, "not json\n");
    await expect(start(h, url)).rejects.toMatchObject({ code: "audit_anchor_database_changed" });
    await expect(start(h, url)).rejects.toThrow(/record of which database the storage URL reached .* cannot be read/);
    const accepted = await start(h, url, true);
    expect(accepted.place.changed).toBeNull();
    expect(JSON.parse(readFileSync(record, "utf8"))).toMatchObject({ connection: await postgresConnectionTarget(url) });
  });
});
