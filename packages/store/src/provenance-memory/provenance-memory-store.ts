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
];

/** Most identities kept; past it, the least recently seen go first. */
export const MAX_REMEMBERED_IDENTITIES = 200_000;
/** Longest source name kept (`server.tool#n`). */
const MAX_SOURCE_CHARS = 600;
/** Remember calls between two prunes of what expired or overflows. */
const PRUNE_EVERY = 1_000;

/** A `ProvenanceMemory` (`@acp/core`) kept in a state database. */
export interface ProvenanceMemoryStore {
  /** The source an identity was read in, while it is remembered (seen within the window). */
  recall(identity: string): string | undefined;
  /** Remembers identities read in one untrusted result, now (an identity seen again moves to now). */
  remember(identities: readonly string[], source: string): void;
  /** Deletes what is older than the window, and the oldest past {@link MAX_REMEMBERED_IDENTITIES}; the count. */
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
       (SELECT identity_hash FROM provenance_memory ORDER BY seen_at_ms DESC, identity_hash LIMIT -1 OFFSET ?)`,
  );
  const insertAll = db.transaction((hashes: readonly string[], source: string, at: number) => {
    for (const h of hashes) upsert.run(h, source, at);
  });
  const cutoff = (): number => options.now().getTime() - options.rememberMs;
  let calls = 0;
  const store: ProvenanceMemoryStore = {
    recall(identity) {
      return find.get(hash(identity), cutoff())?.source;
    },
    remember(identities, source) {
      if (identities.length === 0) return;
      const unique = [...new Set(identities)].slice(0, max).map(hash);
      insertAll(unique, source.slice(0, MAX_SOURCE_CHARS), options.now().getTime());
      if (++calls % PRUNE_EVERY === 0 || unique.length > max / 10) store.prune();
    },
    prune() {
      return expire.run(cutoff()).changes + overflow.run(max).changes;
    },
  };
  store.prune();
  return store;
}
