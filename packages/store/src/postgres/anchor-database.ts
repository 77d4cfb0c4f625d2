/**
 * Which database a storage URL reached when this home last anchored through it. The anchor is named from
 * the database the connection reaches ({@link postgresDatabaseIdentity}), so a dump restored into a new
 * cluster at the same address (by someone who controls the database host, with rows cut from the chain's
 * end) has no anchor in the home: a node's start there was a first start, which verifies the chain from row
 * 1 and cannot tell rows cut from its end. This record (`audit-postgres-<16 hex>.database`, one per
 * connection) keeps which database that was: a node that finds the connection now reaching another one,
 * whose anchor in this home holds a checkpoint, refuses to start (`audit_anchor_database_changed`) until an
 * operator accepts the move, which carries that anchor over to the database it now reaches.
 */
import { createHash } from "node:crypto";
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { readAnchorFile } from "../audit/anchor.js";
import { AuditLogError } from "../audit/index.js";
import { writeFileAtomic } from "../home/atomic-write.js";
import { HOME_FILE_MODE } from "../home/paths.js";

/**
 * The connection a storage URL makes, as the driver reads it (`PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`,
 * `PGOPTIONS` filling what the URL leaves out): `user@host:port/database`, and the startup `options` where
 * given (a `search_path` there picks the schema). Only what the client asks for, nothing the server says:
 * a server put in another's place cannot make it another connection. Never the password.
 */
export async function postgresConnectionTarget(url: string): Promise<string> {
  const { default: driver } = await import("pg");
  const client = new driver.Client({ connectionString: url });
  const options = (client as unknown as { connectionParameters?: { options?: unknown } }).connectionParameters?.options;
  const target = `${client.user ?? ""}@${String(client.host).toLowerCase()}:${String(client.port)}/${client.database ?? ""}`;
  return typeof options === "string" && options !== "" ? `${target} options=${options}` : target;
}

/** What a node found when the connection now reaches another database than this home last anchored through it. */
export interface PostgresAnchorDatabaseChange {
  /** The connection ({@link postgresConnectionTarget}). */
  readonly connection: string;
  /** The database it reached before (`system <id>|<database>|<schema>`, or `target …` where the identifier is withheld). */
  readonly before: string;
  /** That database's anchor in the home: it holds a signed checkpoint. */
  readonly beforeAnchor: string;
  /** The database it reaches now. */
  readonly now: string;
  /** Its anchor file in the home (there or not). */
  readonly nowAnchor: string;
}

/** `cluster <id>, database `acp`, schema `public``: a database identity as a person reads it. */
export function describePostgresDatabase(identity: string): string {
  const [head = "", database = "", schema = ""] = identity.split("|");
  const where = head.startsWith("system ")
    ? `cluster ${head.slice("system ".length)}`
    : head.startsWith("target ")
      ? `${head.slice("target ".length)} (its cluster identifier withheld)`
      : head;
  return `${where}, database \`${database}\`, schema \`${schema}\``;
}

/** The line of `audit_anchor_database_changed`: both databases, what may have happened, how a move is accepted. */
export function postgresDatabaseChangedMessage(change: PostgresAnchorDatabaseChange): string {
  return (
    `the audit chain in PostgreSQL: the storage URL (\`${change.connection}\`) now reaches another database ` +
    `(${describePostgresDatabase(change.now)}) than the one this home last anchored through it ` +
    `(${describePostgresDatabase(change.before)}), whose anchor ${change.beforeAnchor} holds a signed checkpoint: ` +
    "refusing to start, since a node verifies a chain it has no anchor for from row 1 and cannot tell rows cut " +
    "from its end (a dump restored into a new server at the same address, its last rows left out, reads as a " +
    "first start); if the database was moved on purpose (a dump restored on a new server, a new cluster, a " +
    "managed service's migration), start once with `acp serve --accept-moved-database`: the node carries that " +
    `anchor over to the database it reaches now (${change.nowAnchor}, unless this home holds one for it already) ` +
    "and refuses it if it no longer holds that checkpoint (`acp audit verify --storage-url …` in this home " +
    "checks it against that anchor beforehand)"
  );
}

/** A node's refusal to start on a connection that now reaches another database (`audit_anchor_database_changed`). */
export function postgresDatabaseChangedError(change: PostgresAnchorDatabaseChange): AuditLogError {
  return new AuditLogError({ code: "audit_anchor_database_changed" }, postgresDatabaseChangedMessage(change));
}

/** `<home>/audit-postgres-<16 hex>.database`: the record of one connection. */
export function postgresConnectionRecordPath(home: string, connection: string): string {
  const id = createHash("sha256").update(`connection ${connection}`).digest("hex").slice(0, 16);
  return join(home, `audit-postgres-${id}.database`);
}

/** The database identity a connection's record names, or null when there is no record. Throws when unreadable. */
function readRecord(path: string): string | null {
  let text: string;
  try {
    text = readAnchorFile(path, { regularOnly: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw unreadable(path, err instanceof Error ? err.message : String(err));
  }
  let database: unknown;
  try {
    database = (JSON.parse(text) as { database?: unknown }).database;
  } catch {
    database = undefined;
  }
  if (typeof database !== "string" || database === "") throw unreadable(path, "not a record of this version");
  return database;
}

function unreadable(path: string, why: string): AuditLogError {
  return new AuditLogError(
    { code: "audit_anchor_database_changed" },
    `the audit chain in PostgreSQL: this home's record of which database the storage URL reached (${path}) ` +
      `cannot be read (${why}), so a database put in its place cannot be told: refusing to start (move the ` +
      "file aside, or start with `acp serve --accept-moved-database`, after checking the chain with `acp audit " +
      "verify --storage-url … --anchor` and this home's anchor)",
  );
}

/** Whether a path names anything (a dangling link too): an anchor found there is taken to hold a checkpoint. */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

/** What {@link checkPostgresAnchorDatabase} decided. */
export interface PostgresAnchorDatabaseCheck {
  /** The change found (accepted, with `accept`), or null. */
  readonly changed: PostgresAnchorDatabaseChange | null;
  /** The anchor carried over to the database reached now (with `accept`), or null. */
  readonly carriedFrom: string | null;
  /**
   * Makes the record name the database reached now (once; nothing when it does already). Called where the
   * home holds, or is about to write, an anchor for it: nothing is written to a home that holds none.
   */
  readonly record: () => void;
}

/**
 * Compares the database the connection reaches now (`identity`, its anchor `anchorPath`) with the one this
 * home's record names for it. Another one whose anchor is in the home: with `write` and without `accept`,
 * throws `audit_anchor_database_changed`; with `accept`, copies that anchor to `anchorPath` when nothing is
 * there (the new database is then held to its checkpoint). Without `write` (`acp doctor`) it only reports.
 * With `write`, where the home holds an anchor for the database reached now, the record is made to name it
 * (else `record` does it before the anchor is first written). An unreadable record throws (with `write` and
 * `accept`, it is replaced).
 */
export function checkPostgresAnchorDatabase(
  place: {
    readonly home: string;
    readonly connection: string;
    readonly identity: string;
    readonly anchorPath: string;
    readonly anchorOf: (identity: string) => string;
  },
  options: { readonly write: boolean; readonly accept: boolean },
): PostgresAnchorDatabaseCheck {
  const recordPath = postgresConnectionRecordPath(place.home, place.connection);
  let before: string | null;
  let replaced = false;
  try {
    before = readRecord(recordPath);
  } catch (err) {
    if (!(options.write && options.accept)) throw err;
    before = null;
    replaced = true;
  }
  let changed: PostgresAnchorDatabaseChange | null = null;
  let carriedFrom: string | null = null;
  if (before !== null && before !== place.identity) {
    const beforeAnchor = place.anchorOf(before);
    if (present(beforeAnchor)) {
      changed = {
        connection: place.connection,
        before,
        beforeAnchor,
        now: place.identity,
        nowAnchor: place.anchorPath,
      };
    }
  }
  let recorded = before === place.identity;
  const record = (): void => {
    if (recorded) return;
    const line = JSON.stringify({ connection: place.connection, database: place.identity });
    writeFileAtomic(recordPath, `${line}\n`, HOME_FILE_MODE);
    recorded = true;
  };
  if (!options.write) return { changed, carriedFrom, record };
  if (changed !== null) {
    if (!options.accept) throw postgresDatabaseChangedError(changed);
    if (!present(place.anchorPath)) {
      // whole, or not at all: the new database is then held to the checkpoint the old one held
      writeFileAtomic(
        place.anchorPath,
        `${readAnchorFile(changed.beforeAnchor, { regularOnly: true })}\n`,
        HOME_FILE_MODE,
      );
      carriedFrom = changed.beforeAnchor;
    }
  }
  // a home that holds an anchor for it (one written before the record was kept, too) records it now
  if (present(place.anchorPath) || replaced) record();
  return { changed, carriedFrom, record };
}
