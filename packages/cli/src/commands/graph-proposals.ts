/**
 * The consent-graph proposals in their cooling period, for `acp graph review --status`: what the proposal
 * ledger (`state.db`, or the PostgreSQL database of `acp serve`) recorded, with when each takes effect.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { printable, type ConsentGraph } from "@acp/core";
import {
  createPostgresProposalLedger,
  listSqliteProposalSightings,
  openPostgresStore,
  openStateDb,
  type ProposalSightingRow,
} from "@acp/store";
import { explainStorageError } from "@acp/server/state";
import { resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { storageOf } from "./storage-url.js";

const HOUR_MS = 3_600_000;
/** Most recorded proposals read (newest first): those still cooling are among the newest. */
const MAX_READ = 1000;
/** Most diff lines shown per proposal in the text output (`--json` has them all, as recorded). */
const DIFF_LINES_SHOWN = 20;

/** One proposal in its cooling period, as `--status --json` prints it. */
export interface CoolingProposalView {
  readonly domain: string;
  readonly action: string;
  /** When ACP first saw it. */
  readonly first_seen_at: string;
  /** The time the proposer wrote, as written (null: none recorded). */
  readonly proposed_at: string | null;
  /** The later of the two + the domain's `cooling_period_hours`: from then it is asked (or VISIBLE). */
  readonly effective_at: string;
  readonly cooling_period_hours: number;
  readonly tool: string | null;
  readonly server: string | null;
  readonly diff: string | null;
  readonly undo: string | null;
  /** `proposalKey` of the proposal. */
  readonly key: string;
}

/** The rows still cooling under `graph` at `now`, soonest effective first. */
export function coolingProposals(
  graph: ConsentGraph,
  rows: readonly ProposalSightingRow[],
  now: Date,
): CoolingProposalView[] {
  const views: CoolingProposalView[] = [];
  for (const row of rows) {
    const domain = Object.hasOwn(graph.domains, row.domain) ? graph.domains[row.domain] : undefined;
    const hours = domain?.cooling_period_hours;
    if (hours === undefined || hours === 0) continue;
    const claimed = row.proposed_at !== undefined ? Date.parse(row.proposed_at) : Number.NaN;
    const from = Number.isNaN(claimed) ? row.firstSeenMs : Math.max(claimed, row.firstSeenMs);
    const effective = from + hours * HOUR_MS;
    if (!(effective > now.getTime())) continue;
    views.push({
      domain: row.domain,
      action: row.action,
      first_seen_at: new Date(row.firstSeenMs).toISOString(),
      proposed_at: row.proposed_at ?? null,
      effective_at: new Date(effective).toISOString(),
      cooling_period_hours: hours,
      tool: row.tool ?? null,
      server: row.server ?? null,
      diff: row.diff ?? null,
      undo: row.undo ?? null,
      key: row.key,
    });
  }
  return views.sort((a, b) => a.effective_at.localeCompare(b.effective_at));
}

/**
 * The proposals recorded where the home's decisions keep them: `state.db` (none when there is none), or the
 * PostgreSQL database of `--storage-url` / ACP_STORAGE_URL / `storage.url` (as `acp pending` finds it).
 */
export async function readProposalSightings(
  ctx: CliContext,
  flags: { storageUrl?: string },
): Promise<ProposalSightingRow[]> {
  const home = resolveHome(ctx.io);
  const storage = storageOf(ctx, flags, home);
  if (storage === null) {
    const path = join(home, "state.db");
    if (!existsSync(path)) return [];
    try {
      const db = openStateDb(path, { readonly: true });
      try {
        return listSqliteProposalSightings(db, MAX_READ);
      } finally {
        db.close();
      }
    } catch (err) {
      throw new CliError(`cannot read proposals in \`${path}\`: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  try {
    const store = await openPostgresStore(storage.url);
    try {
      return await createPostgresProposalLedger(store).list(MAX_READ);
    } finally {
      await store.close();
    }
  } catch (err) {
    throw new CliError(explainStorageError(err, storage), EXIT.error);
  }
}

/** The text lines for the cooling proposals (every agent-written value shown printable). */
export function coolingProposalLines(views: readonly CoolingProposalView[]): string[] {
  if (views.length === 0) return ["no proposal in a cooling period"];
  const lines = [`proposals in their cooling period (${views.length}):`];
  for (const v of views) {
    const call =
      v.tool !== null ? `, call ${v.server !== null ? `${printable(v.server)}/` : ""}${printable(v.tool)}` : "";
    const claimed = v.proposed_at !== null ? `, proposed_at ${printable(v.proposed_at)}` : "";
    lines.push(
      `  ${printable(`${v.domain}.${v.action}`)}: takes effect at ${v.effective_at} (first seen ${v.first_seen_at}${claimed}${call})`,
    );
    const diff = (v.diff ?? "").split("\n");
    for (const line of diff.slice(0, DIFF_LINES_SHOWN)) lines.push(`    ${printable(line)}`);
    if (diff.length > DIFF_LINES_SHOWN) lines.push(`    … ${diff.length - DIFF_LINES_SHOWN} more line(s) (--json)`);
    if (v.undo !== null) lines.push(`    undo: ${printable(v.undo)}`);
  }
  return lines;
}
