import { createHmac, timingSafeEqual } from "node:crypto";
import type { Database } from "better-sqlite3";
import { applyMigrations, type StateDbMigration } from "../sqlite/index.js";

/**
 * Identifiers an agent read in untrusted content, kept for its later sessions (`provenance_memory` in
 * `$ACP_HOME/state.db`, shared by every proxy of the home). Only an HMAC-SHA-256 of each identity under a
 * 32-byte key kept outside the database (`$ACP_HOME/memory.key`, `loadMemoryKey`) is stored, never the
 * address, IBAN or URL itself: the file says whether a value was seen, not what was read, and without the
 * key a reader of the file cannot test a guess. (`001` keyed the digests with a salt kept in the file
 * itself; `003` drops those rows and that salt, the memory counting them as forgotten for the rest of their
 * window, so no identity is vouched for as never read on the strength of the dropped rows.)
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
  {
    id: "provenance-memory/003-keyed",
    up: (db) => {
      forgetAll(db);
      db.exec(`DROP TABLE provenance_memory_salt;
               CREATE TABLE provenance_memory_key (
                 one   INTEGER PRIMARY KEY CHECK (one = 1),
                 check_digest BLOB NOT NULL
               ) STRICT;`);
    },
  },
];

/**
 * Deletes every remembered identity (digests no key can match any more) and notes when the newest was seen:
 * until that falls out of the window, an identity the memory does not know is {@link FORGOTTEN_SOURCE}.
 */
function forgetAll(db: Database): void {
  const newest = db
    .prepare<[], { newest: number | null }>("SELECT max(seen_at_ms) AS newest FROM provenance_memory")
    .get();
  if (newest?.newest === null || newest?.newest === undefined) return;
  db.prepare<[number]>(
    `INSERT INTO provenance_memory_forgotten (one, seen_at_ms) VALUES (1, ?)
     ON CONFLICT (one) DO UPDATE SET seen_at_ms = max(seen_at_ms, excluded.seen_at_ms)`,
  ).run(newest.newest);
  db.exec("DELETE FROM provenance_memory");
}

/** What the key's digest of this text is kept as, to tell the key the rows were made with. */
const KEY_CHECK_TEXT = "acp provenance memory key check v1";

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
  /** The HMAC key (32 bytes or more; `loadMemoryKey` reads the home's `memory.key`). Never stored in `db`. */
  readonly key: Uint8Array;
  readonly now: () => Date;
  /** How long an identity stays remembered after it was last seen, in ms (`provenance.remember_hours`). */
  readonly rememberMs: number;
  /** Most identities kept (default {@link MAX_REMEMBERED_IDENTITIES}). */
  readonly maxIdentities?: number;
}

/**
 * Opens the memory in `db` (applies its migrations; prunes once). The rows are digests under `options.key`;
 * `db` notes a digest of the key itself, so rows made under another key (the key file was replaced) are not
 * taken for unknown identities: they are dropped and counted as forgotten for the rest of their window. A
 * key that changes while the store is open makes `recall` and `remember` throw (a failing recall refuses).
 */
export function createProvenanceMemoryStore(db: Database, options: ProvenanceMemoryOptions): ProvenanceMemoryStore {
  if (!Number.isFinite(options.rememberMs) || options.rememberMs <= 0) {
    throw new Error("the provenance memory needs a window of more than 0 ms");
  }
  if (!(options.key instanceof Uint8Array) || options.key.length < 32) {
    throw new Error("the provenance memory needs a key of 32 bytes or more");
  }
  applyMigrations(db, MIGRATIONS);
  const max = options.maxIdentities ?? MAX_REMEMBERED_IDENTITIES;
  const key = Buffer.from(options.key);
  const hash = (identity: string): string => createHmac("sha256", key).update(identity, "utf8").digest("hex");
  const keyCheck = createHmac("sha256", key).update(KEY_CHECK_TEXT, "utf8").digest();
  const readCheck = db.prepare<[], { check_digest: Buffer }>(
    "SELECT check_digest FROM provenance_memory_key WHERE one = 1",
  );
  const writeCheck = db.prepare<[Buffer]>(
    `INSERT INTO provenance_memory_key (one, check_digest) VALUES (1, ?)
     ON CONFLICT (one) DO UPDATE SET check_digest = excluded.check_digest`,
  );
  const sameKey = (stored: Buffer | undefined): boolean =>
    stored !== undefined && stored.length === keyCheck.length && timingSafeEqual(stored, keyCheck);
  // the rows were made under the key `db` notes: under another, none of them can be matched any more
  db.transaction(() => {
    const stored = readCheck.get()?.check_digest;
    if (sameKey(stored)) return;
    forgetAll(db);
    writeCheck.run(keyCheck);
  }).immediate();
  const assertKey = (): void => {
    if (!sameKey(readCheck.get()?.check_digest)) {
      throw new Error("the provenance memory's key changed since this process opened it (memory.key was replaced)");
    }
  };
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
    assertKey();
    for (const h of hashes) upsert.run(h, source, at);
  });
  // one read: the key check and the rows it vouches for
  const recall = db.transaction((digest: string, since: number): string | undefined => {
    assertKey();
    const found = find.get(digest, since)?.source;
    if (found !== undefined) return found;
    return forgotten.get(since) === undefined ? undefined : FORGOTTEN_SOURCE;
  });
  const cutoff = (): number => options.now().getTime() - options.rememberMs;
  let calls = 0;
  // identities written since the last prune: the table holds at most max plus a tenth of it between prunes
  let added = 0;
  const store: ProvenanceMemoryStore = {
    recall: (identity) => recall(hash(identity), cutoff()),
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
