import { createHash } from "node:crypto";
import type { Database } from "better-sqlite3";
import { applyMigrations, type StateDbMigration } from "../sqlite/index.js";

/**
 * Identifiers an agent read in untrusted content, kept for its later sessions (`provenance_memory` in
 * `$ACP_HOME/state.db`, shared by every proxy of the home). Only a salted SHA-256 of each identity is kept,
 * never the address, IBAN or URL itself: the file says whether a value was seen, not what was read. The salt
 * is random per database.
 */
const MIGRATIONS: readonly StateDbMigration[] = [
  {
    id: "provenance-memory/001-table",
    up: `CREATE TABLE provenance_memory (
           identity_hash TEXT    PRIMARY KEY,
           source        TEXT    NOT NULL,
           seen_at_ms    INTEGER NOT NULL
         ) STRICT;
         CREATE INDEX provenance_memory_seen ON provenance_memory (seen_at_ms);
         CREATE TABLE provenance_memory_salt (
           one  INTEGER PRIMARY KEY CHECK (one = 1),
           salt BLOB    NOT NULL
         ) STRICT;
         INSERT INTO provenance_memory_salt (one, salt) VALUES (1, randomblob(32));`,
  },
  {
    id: "provenance-memory/002-forgotten",
    up: `CREATE TABLE provenance_memory_forgotten (
           one        INTEGER PRIMARY KEY CHECK (one = 1),
           seen_at_ms INTEGER NOT NULL
         ) STRICT;`,
  },
];

/**
 * The source {@link ProvenanceMemoryStore.recall} gives an identity it no longer knows because the memory
 * overflowed while what it dropped was still within the window: the identity may have been read in untrusted
 * content (a flood of addresses pushed it out), so it is not vouched for as never seen.
 */
export const FORGOTTEN_SOURCE = "(the memory overflowed and forgot what was read before)";

/** Most identities kept; past it, the least recently seen go first. */
export const MAX_REMEMBERED_IDENTITIES = 200_000;
/** Longest source name kept (`server.tool#n`). */
const MAX_SOURCE_CHARS = 600;
/** Remember calls between two prunes of what expired or overflows (sooner after many identities: max / 10). */
const PRUNE_EVERY = 1_000;

/** A `ProvenanceMemory` (`@acp/core`) kept in a state database. */
export interface ProvenanceMemoryStore {
  /**
   * The source an identity was read in, while it is remembered (seen within the window); {@link FORGOTTEN_SOURCE}
   * for one it does not know while identities the overflow dropped would still be within the window.
   */
  recall(identity: string): string | undefined;
  /** Remembers identities read in one untrusted result, now (an identity seen again moves to now). */
  remember(identities: readonly string[], source: string): void;
  /**
   * Deletes what is older than the window, and the oldest past {@link MAX_REMEMBERED_IDENTITIES} (noting when
   * the newest of those was seen, as long as that is within the window); the count.
   */
  prune(): number;
}

/** Options of {@link createProvenanceMemoryStore}. */
export interface ProvenanceMemoryOptions {
  readonly now: () => Date;
  /** How long an identity stays remembered after it was last seen, in ms (`provenance.remember_hours`). */
  readonly rememberMs: number;
  /** Most identities kept (default {@link MAX_REMEMBERED_IDENTITIES}). */
  readonly maxIdentities?: number;
}

/** Opens the memory in `db` (applies its migration; prunes once). */
export function createProvenanceMemoryStore(db: Database, options: ProvenanceMemoryOptions): ProvenanceMemoryStore {
  if (!Number.isFinite(options.rememberMs) || options.rememberMs <= 0) {
    throw new Error("the provenance memory needs a window of more than 0 ms");
  }
  applyMigrations(db, MIGRATIONS);
  const max = options.maxIdentities ?? MAX_REMEMBERED_IDENTITIES;
  const salt = db.prepare<[], { salt: Buffer }>("SELECT salt FROM provenance_memory_salt WHERE one = 1").get()?.salt;
  if (salt === undefined) throw new Error("the provenance memory's salt is missing from state.db");
  const hash = (identity: string): string => createHash("sha256").update(salt).update(identity, "utf8").digest("hex");
  const find = db.prepare<[string, number], { source: string }>(
    "SELECT source FROM provenance_memory WHERE identity_hash = ? AND seen_at_ms > ?",
  );
  const upsert = db.prepare<[string, string, number]>(
    `INSERT INTO provenance_memory (identity_hash, source, seen_at_ms) VALUES (?, ?, ?)
     ON CONFLICT (identity_hash) DO UPDATE SET source = excluded.source, seen_at_ms = excluded.seen_at_ms`,
  );
  const expire = db.prepare<[number]>("DELETE FROM provenance_memory WHERE seen_at_ms <= ?");
  const overflow = db.prepare<[number]>(
    `DELETE FROM provenance_memory WHERE identity_hash IN
       (SELECT identity_hash FROM provenance_memory ORDER BY seen_at_ms DESC, identity_hash LIMIT -1 OFFSET ?)
     RETURNING seen_at_ms`,
  );
  const forget = db.prepare<[number]>(
    `INSERT INTO provenance_memory_forgotten (one, seen_at_ms) VALUES (1, ?)
     ON CONFLICT (one) DO UPDATE SET seen_at_ms = max(seen_at_ms, excluded.seen_at_ms)`,
  );
  const forgotten = db.prepare<[number], { seen_at_ms: number }>(
    "SELECT seen_at_ms FROM provenance_memory_forgotten WHERE one = 1 AND seen_at_ms > ?",
  );
  // an identity pushed out while still within the window may have been read: until its window ends, what the
  // memory does not know is not vouched for as never read (a flood of addresses must not wash one out)
  const pruneOverflow = db.transaction((keep: number): number => {
    const dropped = overflow.all(keep) as { seen_at_ms: number }[];
    let newest = Number.NEGATIVE_INFINITY;
    for (const row of dropped) newest = Math.max(newest, row.seen_at_ms);
    if (dropped.length > 0) forget.run(newest);
    return dropped.length;
  });
  const insertAll = db.transaction((hashes: readonly string[], source: string, at: number) => {
    for (const h of hashes) upsert.run(h, source, at);
  });
  const cutoff = (): number => options.now().getTime() - options.rememberMs;
  let calls = 0;
  // identities written since the last prune: the table holds at most max plus a tenth of it between prunes
  let added = 0;
  const store: ProvenanceMemoryStore = {
    recall(identity) {
      const since = cutoff();
      const found = find.get(hash(identity), since)?.source;
      if (found !== undefined) return found;
      return forgotten.get(since) === undefined ? undefined : FORGOTTEN_SOURCE;
    },
    remember(identities, source) {
      if (identities.length === 0) return;
      const unique = [...new Set(identities)].slice(0, max).map(hash);
      insertAll(unique, source.slice(0, MAX_SOURCE_CHARS), options.now().getTime());
      added += unique.length;
      if (++calls % PRUNE_EVERY === 0 || added > max / 10) store.prune();
    },
    prune() {
      added = 0;
      return expire.run(cutoff()).changes + pruneOverflow(max);
    },
  };
  store.prune();
  return store;
}
