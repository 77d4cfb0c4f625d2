import type { PostgresStore } from "./open-postgres-store.js";

/**
 * How far (ms) a node's clock may be from the database's before it must stop deciding: every node reads its
 * own clock for a request's expiry, a window approval's end and a rate limit's window, so a node off by `s`
 * honours an ended approval, or lets calls leave a window, up to `s` early or late.
 */
export const MAX_CLOCK_SKEW_MS = 2000;

/** One reading of a clock against the database's. */
export interface ClockSkew {
  /** The clock minus the database's (ms): positive when it runs ahead. */
  readonly skewMs: number;
  /** Half the round trip (ms): the reading is exact to within this much. */
  readonly uncertaintyMs: number;
}

/**
 * Reads the database's clock (`clock_timestamp()`) and compares it with `nowMs` taken on either side of the
 * round trip (their midpoint): one short query.
 */
export async function measureClockSkew(store: Pick<PostgresStore, "query">, nowMs: () => number): Promise<ClockSkew> {
  const before = nowMs();
  const startedAt = performance.now();
  const row = (
    await store.query<{ ms: string }>("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS ms")
  ).rows[0];
  const roundTrip = performance.now() - startedAt;
  const after = nowMs();
  const dbMs = Number(row?.ms);
  if (!Number.isFinite(dbMs)) throw new Error("the database did not tell its time");
  return { skewMs: Math.round((before + after) / 2 - dbMs), uncertaintyMs: Math.ceil(roundTrip / 2) };
}

/** Whether a reading is beyond `maxMs` even at the edge of its uncertainty. */
export function clockSkewBeyond(reading: ClockSkew, maxMs: number): boolean {
  return Math.abs(reading.skewMs) - reading.uncertaintyMs > maxMs;
}

/** The reading said for a log line: `12.3s ahead of`/`behind`. */
export function describeClockSkew(reading: ClockSkew): string {
  const s = (Math.abs(reading.skewMs) / 1000).toFixed(1);
  return `${s}s ${reading.skewMs > 0 ? "ahead of" : "behind"}`;
}
