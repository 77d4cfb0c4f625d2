/**
 * `acp audit verify` of the chain `acp serve` keeps in PostgreSQL (no FILE, a storage URL): read page by page,
 * checked against this home's anchor for the database the connection reaches (or `--anchor`), and failed
 * `anchor_missing` when that anchor is gone while its marker is there. `audit-verify.ts` reports the verdict.
 */
import { existsSync } from "node:fs";
import { failForMissingAnchor, verifyAuditChain, type AuditVerification, type VerifyAuditOptions } from "@acp/core";
import {
  describePostgresDatabase,
  hasPostgresAnchoredMarker,
  openPostgresStore,
  postgresAnchoredMarkerPathOf,
  postgresAnchorMissingReason,
  resolvePostgresAuditAnchorPath,
  verifyPostgresAuditChain,
  type PostgresAnchorDatabaseChange,
  type PostgresStore,
} from "@acp/store";
import { explainStorageError, safeStorageUrl, type ResolvedStorageUrl } from "@acp/server/state";
import { CliError, EXIT } from "../exit-codes.js";

/** What the PostgreSQL chain's verification gives the report: where, the verdict, and a moved database. */
export interface PostgresVerified {
  readonly where: {
    readonly file: string;
    readonly anchorPath: string;
    readonly anchor: string | undefined;
    readonly home: string;
    readonly unterminatedLine: null;
    readonly postgres: true;
    readonly marker: string | null;
  };
  readonly judged: AuditVerification;
  /** The storage URL now reaches another database than the home's record names: checked against that one's anchor. */
  readonly moved: PostgresAnchorDatabaseChange | null;
}

/**
 * Verifies the chain in the database `storage` reaches. `anchorGiven`: the `--anchor` FILE, resolved; absent,
 * the home's anchor for that database (audit-postgres-<id>.checkpoint, what an acp serve node on it keeps).
 * `readAnchor` reads an anchor file or throws the CLI's error for it.
 */
export async function verifyPostgresChain(
  storage: ResolvedStorageUrl,
  home: string,
  anchorGiven: string | undefined,
  publicKey: string | undefined,
  readAnchor: (path: string, named: boolean) => string,
): Promise<PostgresVerified> {
  // the database keeps no anchor of its own: this home's when there is one, or a checkpoint row's line kept
  // elsewhere (--anchor); the home's is named from the database the connection reaches (read under its old
  // name while only that is there)
  const { result, options: found } = await readPostgresChain(storage, async (store) => {
    // the home's record of which database this connection last anchored: where it now reaches another one
    // (a dump restored on a new server at the same address), the check is against that one's anchor, as
    // acp serve holds it (the new database has none: a cut there would go unseen)
    const place =
      anchorGiven !== undefined
        ? null
        : await resolvePostgresAuditAnchorPath(home, storage.url, (t, v) => store.query(t, v));
    const moved = place?.changed ?? null;
    const anchorPath = place === null ? (anchorGiven ?? "") : (moved?.beforeAnchor ?? place.path);
    // the old database's anchor is there (checkPostgresAnchorDatabase found it): one that cannot be read fails
    const anchor =
      anchorGiven !== undefined || moved !== null || existsSync(anchorPath)
        ? readAnchor(anchorPath, anchorGiven !== undefined)
        : undefined;
    // the anchor's marker (written by acp serve with its first anchor): without the anchor, it was deleted
    const marker =
      place !== null && hasPostgresAnchoredMarker(anchorPath) ? postgresAnchoredMarkerPathOf(anchorPath) : null;
    const verify = {
      ...(publicKey === undefined ? {} : { publicKey }),
      ...(anchor === undefined ? {} : { anchor }),
    };
    return { anchorPath, anchor, verify, moved, marker, expected: anchor !== undefined || marker !== null };
  });
  const { anchorPath, anchor, moved, marker } = found;
  const where = {
    file: safeStorageUrl(storage.url),
    anchorPath,
    anchor,
    home,
    unterminatedLine: null,
    postgres: true as const,
    marker,
  };
  // a node's anchor gone while its marker is there: deleted, perhaps with the chain cut from its end
  const judged =
    anchor === undefined && marker !== null
      ? failForMissingAnchor(result, postgresAnchorMissingReason(anchorPath))
      : result;
  return { where, judged, moved };
}

/**
 * The chain of `acp serve` in PostgreSQL, read page by page (one page in memory). A database without the
 * chain's table is "no audit chain" (exit 1), unless the home says it had one (`expected`: an anchor, or its
 * marker, for it): then it is verified as an empty chain, which fails against the anchor (or for want of it).
 */
async function readPostgresChain<T extends { readonly verify: VerifyAuditOptions; readonly expected: boolean }>(
  storage: ResolvedStorageUrl,
  optionsOf: (store: PostgresStore) => Promise<T>,
): Promise<{ result: AuditVerification; options: T }> {
  let store;
  try {
    store = await openPostgresStore(storage.url, { migrate: false, applicationName: "acp audit verify", max: 1 });
  } catch (err) {
    throw new CliError(explainStorageError(err, storage), EXIT.error);
  }
  let options: T | undefined;
  try {
    options = await optionsOf(store);
    return { result: await verifyPostgresAuditChain(store, options.verify), options };
  } catch (err) {
    if (err instanceof CliError) throw err; // the anchor's (readAnchorOrFail), said as it is
    if ((err as { code?: unknown }).code === "42P01") {
      if (options?.expected === true) return { result: verifyAuditChain([], options.verify), options };
      throw new CliError(
        `${storage.source}: no audit chain in ${safeStorageUrl(storage.url)} (acp serve has not run on this database)`,
        EXIT.error,
      );
    }
    throw new CliError(explainStorageError(err, storage), EXIT.error);
  } finally {
    await store.close();
  }
}

/**
 * Said before the verdict when the storage URL now reaches another database than the home's record names
 * (`audit_anchor_database_changed` to acp serve): the chain was checked against that database's anchor.
 */
export function postgresMovedNote(change: PostgresAnchorDatabaseChange): string {
  return (
    `note: the storage URL (\`${change.connection}\`) now reaches another database ` +
    `(${describePostgresDatabase(change.now)}) than the one this home last anchored through it ` +
    `(${describePostgresDatabase(change.before)}): verified against that database's anchor ${change.beforeAnchor}, ` +
    "so rows cut from the chain's end are caught; acp serve refuses to start here (audit_anchor_database_changed) " +
    "until started once with `acp serve --accept-moved-database`, which holds the new database to that anchor"
  );
}
