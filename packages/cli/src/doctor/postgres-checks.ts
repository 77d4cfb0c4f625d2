/**
 * `acp doctor` on what an `acp serve` node on PostgreSQL holds to: this machine's clock against the
 * database's (a node more than {@link MAX_CLOCK_SKEW_MS} off refuses decisions, `postgres_clock_skew`) and
 * the node's audit anchor in the home (`audit-postgres-<id>.checkpoint`), which the database must still hold
 * byte for byte. Both only read: nothing is written to the database or the home.
 */
import { basename } from "node:path";
import { parseAuditLine, readCheckpoint } from "@acp/core";
import {
  clockSkewBeyond,
  describeClockSkew,
  hasPostgresAnchoredMarker,
  MAX_CLOCK_SKEW_MS,
  measureClockSkew,
  postgresAnchoredMarkerPathOf,
  postgresAnchorMissingReason,
  postgresDatabaseChangedMessage,
  resolvePostgresAuditAnchorPath,
  readAnchorFile,
  type HomeCheck,
  type PostgresStore,
} from "@acp/store";

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * The `clock` check: this machine's clock (`now`) against the database's, as the nodes measure it
 * (`measureClockSkew`); fails beyond {@link MAX_CLOCK_SKEW_MS} even at the edge of the reading's uncertainty.
 */
export async function checkClock(store: Pick<PostgresStore, "query">, now: () => Date): Promise<HomeCheck> {
  let reading;
  try {
    reading = await measureClockSkew(store, () => now().getTime());
  } catch (err) {
    return { status: "fail", name: "clock", detail: `cannot read the database's clock: ${messageOf(err)}` };
  }
  const offset = `${reading.skewMs >= 0 ? "+" : "-"}${Math.abs(reading.skewMs)} ms ±${reading.uncertaintyMs} ms`;
  if (clockSkewBeyond(reading, MAX_CLOCK_SKEW_MS)) {
    return {
      status: "fail",
      name: "clock",
      detail:
        `this machine's clock is ${describeClockSkew(reading)} the database's (${offset}; at most ` +
        `${MAX_CLOCK_SKEW_MS} ms allowed): acp serve here would refuse decisions (postgres_clock_skew) and ` +
        "acp approve refuse approvals; set the clock (NTP: e.g. `timedatectl set-ntp true`)",
    };
  }
  return {
    status: "ok",
    name: "clock",
    detail: `${offset} from the database's clock (at most ${MAX_CLOCK_SKEW_MS} ms allowed)`,
  };
}

/** The `seq` of the checkpoint row an anchor line names (its `count + 1`), or null when it is not one. */
function anchorSeq(line: string): number | null {
  const parsed = parseAuditLine(line);
  if (!parsed.ok || parsed.value.event_type !== "checkpoint") return null;
  const read = readCheckpoint(parsed.value);
  return read.ok ? read.value.body.count + 1 : null;
}

/** The chain's length and its newest checkpoint row (0 and null without the table). */
async function chainShape(store: Pick<PostgresStore, "query">): Promise<{ rows: number; checkpoint: number | null }> {
  try {
    const found = await store.query<{ rows: number | string; checkpoint: number | string | null }>(
      // index reads from the end (a checkpoint comes at least every 1000 rows), not a scan of the chain
      `SELECT (SELECT COALESCE(MAX(seq), 0) FROM acp_audit_events) AS rows,
         (SELECT seq FROM acp_audit_events WHERE event_type = 'checkpoint' ORDER BY seq DESC LIMIT 1) AS checkpoint`,
    );
    const row = found.rows[0];
    return { rows: Number(row?.rows ?? 0), checkpoint: row?.checkpoint == null ? null : Number(row.checkpoint) };
  } catch (err) {
    if ((err as { code?: unknown }).code === "42P01") return { rows: 0, checkpoint: null }; // no audit table yet
    throw err;
  }
}

/**
 * No anchor in the home for this database: nothing to hold on a chain without a checkpoint (empty, or before
 * its first: no node keeps an anchor yet; the first checkpoint becomes it: ok); on a chain with one, a
 * warning with its rows and newest checkpoint, which acp serve's first start verifies from row 1 and anchors
 * at (it says so on its start-up output).
 */
async function noAnchor(store: Pick<PostgresStore, "query">, name: string, file: string): Promise<HomeCheck> {
  let shape;
  try {
    shape = await chainShape(store);
  } catch (err) {
    return { status: "fail", name, detail: `cannot read the audit chain: ${messageOf(err)}` };
  }
  if (shape.checkpoint === null) {
    // no node keeps an anchor before the chain's first checkpoint: a running node's home has none either
    const held =
      shape.rows === 0
        ? "is empty"
        : `holds ${shape.rows === 1 ? "1 row" : `${shape.rows} rows`} and no checkpoint yet`;
    return {
      status: "ok",
      name,
      detail:
        `no node anchor for this database yet (${file}) and the audit chain ${held}: the first checkpoint ` +
        "a node signs becomes its anchor",
    };
  }
  const rows = shape.rows === 1 ? "1 row" : `${shape.rows} rows`;
  const newest = `its newest checkpoint at row ${shape.checkpoint}`;
  return {
    status: "warn",
    name,
    detail:
      `this home holds no node anchor for this database (${file}) while the audit chain holds ${rows} (${newest}): ` +
      "acp serve's first start here verifies the whole chain from row 1 and anchors at its newest checkpoint " +
      "that verifies with this home's key, saying so on its output (refusing to start, audit_anchor_missing, if " +
      "the chain does not verify); if a node ran with this home on this database before, its anchor was lost: " +
      "run `acp audit verify` with this storage URL to check the chain first, or copy the anchor from a node that has one",
  };
}

/**
 * The `audit anchor` check: whether the home holds the node anchor for the database of `url`
 * (`resolvePostgresAuditAnchorPath`, as `acp serve` and `acp audit verify` find it) and whether the database still
 * holds that checkpoint row byte for byte; it fails, as `acp serve` refuses to start, where the URL now reaches
 * another database than the home last anchored through it (`audit_anchor_database_changed`). Missing is a warning while the chain holds a checkpoint (a node's
 * first start verifies the whole chain, then anchors at the newest checkpoint that verifies with the key),
 * fine before its first checkpoint; a row gone or changed fails,
 * naming `acp audit verify`. Rows after the checkpoint are `acp audit verify`'s to check.
 */
export async function checkAuditAnchor(
  store: Pick<PostgresStore, "query">,
  home: string,
  url: string,
): Promise<HomeCheck> {
  const name = "audit anchor";
  let path: string;
  try {
    // named from the database the connection reaches; an anchor still under its old name is read there
    const place = await resolvePostgresAuditAnchorPath(home, url, (t, v) => store.query(t, v));
    // the URL now reaches another database than this home last anchored through it: acp serve refuses it
    if (place.changed !== null) {
      return {
        status: "fail",
        name,
        detail: `acp serve here stops (audit_anchor_database_changed): ${postgresDatabaseChangedMessage(place.changed)}`,
      };
    }
    path = place.path;
  } catch (err) {
    return { status: "fail", name, detail: `cannot tell which database this is: ${messageOf(err)}` };
  }
  const file = basename(path);
  const verify = "run `acp audit verify` (with this storage URL) to find where the chain was cut or rewritten";
  let line: string;
  try {
    line = readAnchorFile(path, { regularOnly: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT")
      return { status: "fail", name, detail: `${path}: ${messageOf(err)}` };
    // its marker says this home had one: deleted, perhaps with the chain cut from its end
    if (hasPostgresAnchoredMarker(path))
      return {
        status: "fail",
        name,
        detail:
          `${postgresAnchorMissingReason(path)}: acp serve here refuses the database (audit_anchor_missing) and ` +
          "acp audit verify fails it (anchor_missing); put the anchor back if a copy was kept, or copy another " +
          `node's; once you know why it is gone, remove ${basename(postgresAnchoredMarkerPathOf(path))}`,
      };
    return noAnchor(store, name, file);
  }
  const seq = anchorSeq(line);
  if (seq === null) {
    return {
      status: "fail",
      name,
      detail: `${path} is not a checkpoint line: acp serve refuses to extend the chain (audit_anchor_mismatch); ${verify}`,
    };
  }
  let rows: readonly { line: string }[];
  try {
    rows = (await store.query<{ line: string }>("SELECT line FROM acp_audit_events WHERE seq = $1", [seq])).rows;
  } catch (err) {
    if ((err as { code?: unknown }).code !== "42P01") {
      return { status: "fail", name, detail: `cannot read row ${seq} of the audit chain: ${messageOf(err)}` };
    }
    rows = []; // no audit table at all: the chain the anchor names is gone
  }
  const row = rows[0];
  const why =
    row === undefined
      ? `the database no longer has row ${seq}, this node's signed checkpoint (${file})`
      : row.line !== line
        ? `row ${seq} of the database is not this node's signed checkpoint (${file}) byte for byte`
        : null;
  if (why !== null) {
    return {
      status: "fail",
      name,
      detail: `${why}: acp serve here refuses to extend the chain (audit_anchor_mismatch); ${verify}`,
    };
  }
  return {
    status: "ok",
    name,
    detail: `the database still holds this node's signed checkpoint, row ${seq}, byte for byte (${file})`,
  };
}
