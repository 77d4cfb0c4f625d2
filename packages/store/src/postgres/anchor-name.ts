import { createHash } from "node:crypto";
import { existsSync, linkSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../home/atomic-write.js";
import { HOME_FILE_MODE } from "../home/paths.js";
import {
  checkPostgresAnchorDatabase,
  postgresConnectionTarget,
  type PostgresAnchorDatabaseChange,
} from "./anchor-database.js";
import type { AnchorQuery } from "./audit-anchor.js";

/**
 * The name of a node's anchor file before 28 Nov 2026: from the URL's text (host, port, path, `?host=`).
 * The driver fills what the URL leaves out from `PGHOST`/`PGPORT`/`PGDATABASE`, so one URL text could reach
 * two databases and share one anchor (a false `audit_anchor_mismatch`, or one database's cut read against
 * the other's anchor), and one database reached by two routes (its address, a unix socket, PgBouncer) had
 * two. Read only to move such a file to {@link resolvePostgresAuditAnchorPath}'s name.
 */
export function legacyPostgresAuditAnchorPath(home: string, url: string): string {
  const u = new URL(url);
  const key = `${u.hostname.toLowerCase()}:${u.port === "" ? "5432" : u.port}${u.pathname}|${u.searchParams.get("host") ?? ""}`;
  return anchorFile(home, key);
}

function anchorFile(home: string, key: string): string {
  const id = createHash("sha256").update(key).digest("hex").slice(0, 16);
  return join(home, `audit-postgres-${id}.checkpoint`);
}

/** SQLSTATE classes that mean the identity function may not be called here (not that the database is gone). */
const NOT_OFFERED = /^(42|0A)/;

/**
 * What the node is connected to, asked of the server: the cluster's system identifier (kept by its physical
 * replicas and a failover, whatever address or socket leads to it), the database and the schema the tables
 * are found in. Where `pg_control_system()` may not be called (a managed service that withholds it), the
 * host and port the driver connected to instead (the URL with `PGHOST`/`PGPORT` applied, a socket's
 * directory included). A failure to read it (a connection lost) throws.
 */
export async function postgresDatabaseIdentity(query: AnchorQuery, url: string): Promise<string> {
  try {
    const { rows } = await query(
      "SELECT system_identifier::text AS id, current_database() AS db, COALESCE(current_schema(), '') AS schema " +
        "FROM pg_control_system()",
      [],
    );
    const row = rows[0] as { id: string; db: string; schema: string } | undefined;
    if (row !== undefined) return `system ${row.id}|${row.db}|${row.schema}`;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== "string" || !NOT_OFFERED.test(code)) throw err;
  }
  const { rows } = await query("SELECT current_database() AS db, COALESCE(current_schema(), '') AS schema", []);
  const row = rows[0] as { db: string; schema: string };
  const { default: driver } = await import("pg");
  // what the driver connects to: the URL, with libpq's environment variables and defaults for what it omits
  const target = new driver.Client({ connectionString: url });
  return `target ${String(target.host).toLowerCase()}:${String(target.port)}|${row.db}|${row.schema}`;
}

/** Where a node's anchor for a database is ({@link resolvePostgresAuditAnchorPath}). */
export interface PostgresAuditAnchorPlace {
  /** The file to read and write. */
  readonly path: string;
  /** The file under the name of before 28 Nov 2026 that was moved to `path` (now gone), or null. */
  readonly movedFrom: string | null;
  /**
   * The storage URL reaches another database than this home last anchored through it, whose anchor is in the
   * home (`checkPostgresAnchorDatabase`): found (without `move`), or accepted (`acceptMovedDatabase`); else null.
   */
  readonly changed: PostgresAnchorDatabaseChange | null;
  /** With `acceptMovedDatabase`: the anchor of the database reached before, copied to `path`; else null. */
  readonly carriedFrom: string | null;
  /**
   * Records in the home that the connection reaches this database (with `move`, already done where the home
   * holds its anchor): give it to `openPostgresAuditAnchor` as `beforeWrite`, so a home records it with its
   * first anchor and nothing is written to a home that holds none.
   */
  readonly recordDatabase: () => void;
}

/**
 * `<home>/audit-postgres-<16 hex>.checkpoint`: one anchor per database a home is used with, named from what
 * the connection reaches ({@link postgresDatabaseIdentity}), not from the URL's text. With `move`, an anchor
 * under the old name ({@link legacyPostgresAuditAnchorPath}) and none under the new one is moved there (a
 * hard link then an unlink, so it is never lost, and a second node of the same home finds one or the other):
 * an anchor is never dropped, so a cut made before the upgrade is still caught. Without `move` (the
 * read-only tools: `acp doctor`, `acp audit verify`), the old file's path is given while it is the only one.
 *
 * The home also records which database each connection (the URL as the driver reads it) reached. With `move`
 * (a node's start), a connection that now reaches another database than the one recorded, whose anchor is
 * in the home, throws `audit_anchor_database_changed` (a dump restored into a new server at the same address
 * would otherwise start as a first start and rows cut from its end go unseen); `acceptMovedDatabase` accepts
 * the move and carries that anchor to `path` when none is there. Without `move` the change is only reported
 * (`changed`). With `move` the record is written where the home holds the anchor; else `recordDatabase`
 * writes it, before the anchor is first written.
 */
export async function resolvePostgresAuditAnchorPath(
  home: string,
  url: string,
  query: AnchorQuery,
  options: { readonly move?: boolean; readonly acceptMovedDatabase?: boolean } = {},
): Promise<PostgresAuditAnchorPlace> {
  const identity = await postgresDatabaseIdentity(query, url);
  const path = anchorFile(home, identity);
  const found = checkPostgresAnchorDatabase(
    {
      home,
      connection: await postgresConnectionTarget(url),
      identity,
      anchorPath: path,
      anchorOf: (id) => anchorFile(home, id),
    },
    { write: options.move === true, accept: options.acceptMovedDatabase === true },
  );
  const stay = {
    path,
    movedFrom: null,
    changed: found.changed,
    carriedFrom: found.carriedFrom,
    recordDatabase: found.record,
  };
  let legacy: string;
  try {
    legacy = legacyPostgresAuditAnchorPath(home, url);
  } catch {
    return stay; // a URL the old naming could not read had no anchor under it
  }
  if (legacy === path || existsSync(path) || !existsSync(legacy)) return stay;
  if (options.move !== true) return { ...stay, path: legacy };
  try {
    linkSync(legacy, path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENOENT, EEXIST: another process of this home moved it at the same moment (the same line)
    if (code === "ENOENT" || code === "EEXIST") return stay;
    // a file system without hard links: a copy, written whole
    writeFileAtomic(path, readFileSync(legacy, "utf8"), HOME_FILE_MODE);
  }
  try {
    unlinkSync(legacy);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  found.record(); // the home holds the anchor for this database now
  return { ...stay, movedFrom: legacy };
}
