import type { ProposalSighting } from "@acp/core";

/** Default bound of a stored ledger: past it the oldest first sights are forgotten (those start again). */
export const MAX_STORED_PROPOSALS = 10_000;
/** Longest diff or undo kept for display (characters); the key is of the whole proposal. */
export const MAX_SIGHTING_TEXT = 8_192;
/** Longest domain, action, tool, server or proposed_at kept. */
export const MAX_SIGHTING_NAME = 256;

/** One first sight as a store keeps it. */
export interface ProposalSightingRow extends ProposalSighting {
  /** `proposalKey` of the proposal. */
  readonly key: string;
  /** When ACP first saw it (ms since the epoch). */
  readonly firstSeenMs: number;
}

/** The columns of a sighting, bounded: long text cut with `…` (it is for a person to read). */
export interface SightingColumns {
  readonly domain: string;
  readonly action: string;
  readonly proposed_at: string | null;
  readonly diff: string | null;
  readonly undo: string | null;
  readonly tool: string | null;
  readonly server: string | null;
}

function cut(text: string | undefined, max: number): string | null {
  if (text === undefined) return null;
  const clean = text.replaceAll("\u0000", "");
  return clean.length <= max ? clean : `${clean.slice(0, max - 1)}…`;
}

/** The columns to store for `sighting` (an absent one: the key's domain and action unknown). */
export function sightingColumns(sighting: ProposalSighting | undefined): SightingColumns {
  return {
    domain: cut(sighting?.domain, MAX_SIGHTING_NAME) ?? "",
    action: cut(sighting?.action, MAX_SIGHTING_NAME) ?? "",
    proposed_at: cut(sighting?.proposed_at, MAX_SIGHTING_NAME),
    diff: cut(sighting?.diff, MAX_SIGHTING_TEXT),
    undo: cut(sighting?.undo, MAX_SIGHTING_TEXT),
    tool: cut(sighting?.tool, MAX_SIGHTING_NAME),
    server: cut(sighting?.server, MAX_SIGHTING_NAME),
  };
}

/** A stored row as read back (column names as both stores spell them). */
export interface StoredSighting extends SightingColumns {
  readonly key: string;
  readonly first_seen_ms: number | string;
}

/** The row a store read, as `ProposalSightingRow`. */
export function sightingRowOf(row: StoredSighting): ProposalSightingRow {
  return {
    key: row.key,
    firstSeenMs: Number(row.first_seen_ms),
    domain: row.domain,
    action: row.action,
    ...(row.proposed_at !== null ? { proposed_at: row.proposed_at } : {}),
    ...(row.diff !== null ? { diff: row.diff } : {}),
    ...(row.undo !== null ? { undo: row.undo } : {}),
    ...(row.tool !== null ? { tool: row.tool } : {}),
    ...(row.server !== null ? { server: row.server } : {}),
  };
}

/** Checks a ledger call's key and time; throws on what no proposal would produce. */
export function assertSightingArguments(key: string, now: Date): number {
  if (typeof key !== "string" || key.length === 0 || key.length > 512 || key.includes("\u0000")) {
    throw new TypeError("proposal ledger: invalid key");
  }
  const ms = now instanceof Date ? now.getTime() : Number.NaN;
  if (!Number.isSafeInteger(ms)) throw new RangeError("invalid time for a proposal's first sight");
  return ms;
}
