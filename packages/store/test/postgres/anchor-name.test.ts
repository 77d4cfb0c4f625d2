/**
 * The name of a node's anchor file comes from the database the connection reaches (the cluster's system
 * identifier, the database, the schema), not from the URL's text: one URL text that `PGDATABASE` points at
 * two databases gives two anchors, one database reached over TCP or its unix socket one; a file under the
 * old URL-derived name is moved to the new name, never lost, so a cut made before the upgrade is still
 * caught; where `pg_control_system()` is withheld, the driver's effective host and port name it.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  createPostgresAuditLog,
  legacyPostgresAuditAnchorPath,
  openPostgresAuditAnchor,
  openPostgresStore,
  resolvePostgresAuditAnchorPath,
  type AnchorQuery,
} from "@acp/store";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "./test-database.js";

const dirs: string[] = [];
const dbs: TestDatabase[] = [];
const saved = process.env["PGDATABASE"];
afterEach(() => {
  if (saved === undefined) delete process.env["PGDATABASE"];
  else process.env["PGDATABASE"] = saved;
});
afterAll(async () => {
  for (const db of dbs) await db.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-pg-anchor-name-"));
  dirs.push(dir);
  return dir;
}

async function database(): Promise<{ url: string; name: string }> {
  const db = await createTestDatabase();
  dbs.push(db);
  return { url: db.url, name: new URL(db.url).pathname.slice(1) };
}

/** Runs `fn` with one connection to `url` (the driver applying libpq's environment variables). */
async function connected<T>(url: string, fn: (query: AnchorQuery) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn((text, values) => client.query(text, values));
  } finally {
    await client.end();
  }
}

const resolve = (h: string, url: string, move = false) =>
  connected(url, (q) => resolvePostgresAuditAnchorPath(h, url, q, { move }));

describe("the name of a node's anchor file", () => {
  it("one URL text that PGDATABASE points at two databases gives two names (the URL-derived name was one)", async () => {
    const a = await database();
    const b = await database();
    const server = new URL(postgresTestUrl());
    const bare = `postgres://${server.username}@${server.host}`; // no database: the driver takes PGDATABASE
    const h = home();
    process.env["PGDATABASE"] = a.name;
    const ofA = await resolve(h, bare);
    process.env["PGDATABASE"] = b.name;
    const ofB = await resolve(h, bare);
    expect(ofA.path).not.toBe(ofB.path);
    expect(ofA.path).toMatch(/audit-postgres-[0-9a-f]{16}\.checkpoint$/);
    // named after the database itself: the same as its full URL gives
    expect((await resolve(h, a.url)).path).toBe(ofA.path);
    expect(legacyPostgresAuditAnchorPath(h, bare)).not.toBe(ofA.path);
  });

  it("one database reached over TCP and over its unix socket gives one name", async () => {
    const a = await database();
    const { dir, port } = await connected(a.url, async (q) => {
      const dirs = (await q("SHOW unix_socket_directories", [])).rows[0] as { unix_socket_directories: string };
      const p = (await q("SHOW port", [])).rows[0] as { port: string };
      return { dir: dirs.unix_socket_directories.split(",")[0]?.trim() ?? "", port: p.port };
    });
    expect(dir.startsWith("/")).toBe(true);
    const socketUrl = `postgres://${new URL(a.url).username}@${encodeURIComponent(dir)}:${port}/${a.name}`;
    const h = home();
    const viaSocket = await resolve(h, socketUrl);
    expect(viaSocket.path).toBe((await resolve(h, a.url)).path);
    expect(legacyPostgresAuditAnchorPath(h, socketUrl)).not.toBe(legacyPostgresAuditAnchorPath(h, a.url));
  });

  it("moves an anchor under the old name to the new one (read-only callers read it where it is)", async () => {
    const a = await database();
    const h = home();
    const legacy = legacyPostgresAuditAnchorPath(h, a.url);
    writeFileSync(legacy, "a checkpoint line\n");
    const read = await resolve(h, a.url);
    expect(read).toMatchObject({ path: legacy, movedFrom: null, changed: null, carriedFrom: null }); // without move: the old file, left in place
    const moved = await resolve(h, a.url, true);
    expect(moved.movedFrom).toBe(legacy);
    expect(moved.path).not.toBe(legacy);
    expect(readFileSync(moved.path, "utf8")).toBe("a checkpoint line\n");
    expect(existsSync(legacy)).toBe(false);
    // once moved (or when both are there) the new name is used and an old file is left alone
    writeFileSync(legacy, "another line\n");
    expect(await resolve(h, a.url, true)).toMatchObject({
      path: moved.path,
      movedFrom: null,
      changed: null,
      carriedFrom: null,
    });
    expect(readFileSync(moved.path, "utf8")).toBe("a checkpoint line\n");
    expect(readFileSync(legacy, "utf8")).toBe("another line\n");
  });

  it("a chain cut before the upgrade is still refused: the moved anchor holds the node to its checkpoint", async () => {
    const a = await database();
    const store = await openPostgresStore(a.url);
    try {
      const { privateKey, publicKey } = generateKeyPairSync("ed25519");
      const query: AnchorQuery = (text, values) => store.query(text, values);
      const h = home();
      const legacy = legacyPostgresAuditAnchorPath(h, a.url);
      const log = createPostgresAuditLog(store, {
        clock: () => new Date(),
        signer: privateKey,
        checkpointEvery: 3,
        anchor: await openPostgresAuditAnchor(query, { path: legacy, publicKey }),
      });
      for (const tool of ["a", "b", "c", "d", "e"])
        await log.append({ event_type: "policy_evaluated", tool, decision: "deny" });
      await log.close();
      const held = readFileSync(legacy, "utf8");
      const seq = Number((await store.query<{ n: number }>("SELECT MAX(seq) AS n FROM acp_audit_events")).rows[0]?.n);
      expect(held).toContain('"checkpoint"');

      // intact: the moved anchor is taken as it is (no first use, nothing verified from row 1)
      const place = await resolvePostgresAuditAnchorPath(h, a.url, query, { move: true });
      expect(place.movedFrom).toBe(legacy);
      const again = await openPostgresAuditAnchor(query, { path: place.path, publicKey });
      expect(again.firstAnchor).toBeNull();

      // cut at the anchor's checkpoint, then an upgrade of a home still holding the old name: refused
      const h2 = home();
      writeFileSync(legacyPostgresAuditAnchorPath(h2, a.url), held);
      await store.query("DELETE FROM acp_audit_events WHERE seq >= $1", [seq]);
      const cut = await resolvePostgresAuditAnchorPath(h2, a.url, query, { move: true });
      await expect(openPostgresAuditAnchor(query, { path: cut.path, publicKey })).rejects.toMatchObject({
        code: "audit_anchor_mismatch",
      });
    } finally {
      await store.close();
    }
  });

  it("where pg_control_system() is withheld, the effective host and port name it, the same each time", async () => {
    const a = await database();
    const role = `acp_t_role_${randomBytes(4).toString("hex")}`;
    await connected(a.url, async (q) => {
      await q(`CREATE ROLE ${role} LOGIN`, []);
      await q("REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC", []);
    });
    try {
      const url = new URL(a.url);
      url.username = role;
      const h = home();
      const withheld = await connected(url.toString(), async (q) => {
        await expect(q("SELECT system_identifier FROM pg_control_system()", [])).rejects.toMatchObject({
          code: "42501",
        });
        return resolvePostgresAuditAnchorPath(h, url.toString(), q);
      });
      expect(withheld.path).toMatch(/audit-postgres-[0-9a-f]{16}\.checkpoint$/);
      expect(withheld.path).not.toBe((await resolve(h, a.url)).path);
      expect((await resolve(h, url.toString())).path).toBe(withheld.path);
    } finally {
      await connected(a.url, (q) => q(`DROP ROLE ${role}`, []));
    }
  });
});
