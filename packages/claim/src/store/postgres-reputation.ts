import type { PostgresStore } from "@acp/store";
import type { ChargeInput, ReputationCharge } from "./claim-store.js";

/** Anything that runs a query: the pool or a transaction's connection. */
type Queryable = Pick<PostgresStore, "query">;

/**
 * Reputation and admission-token bookkeeping of {@link PostgresClaimStore} (`claim/002-reputation`). A charge is
 * one upsert whose update decays the stored score in SQL (`score · 0.5^(Δt / half-life) + points`) on the row it
 * locks, so concurrent charges from several nodes add up instead of overwriting each other.
 */

/** Adds `charge.points` to `key`, decaying the stored score to `now` first. */
export async function chargeKey(c: Queryable, key: string, charge: ReputationCharge, now: number): Promise<void> {
  await c.query(
    `INSERT INTO claim_reputation (key, score, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (key) DO UPDATE SET
       score = claim_reputation.score * power(0.5, GREATEST(0, $3 - claim_reputation.updated_at)::float8 / $4) + EXCLUDED.score,
       updated_at = GREATEST(claim_reputation.updated_at, $3)`,
    [key, charge.points, now, charge.halfLifeMs],
  );
}

/** Charges the input's keys and its sandbox's keys, each once. */
export async function chargeAll(c: Queryable, input: ChargeInput): Promise<void> {
  const keys = new Set(input.keys);
  if (input.sandboxId !== undefined) {
    const r = await c.query<{ source_key: string | null; subject_key: string | null }>(
      "SELECT source_key, subject_key FROM claim_sandboxes WHERE id = $1",
      [input.sandboxId],
    );
    for (const k of [r.rows[0]?.source_key, r.rows[0]?.subject_key]) if (typeof k === "string" && k !== "") keys.add(k);
  }
  // A fixed order, so two transactions charging the same keys lock them in the same order (no deadlock).
  for (const k of [...keys].sort()) await chargeKey(c, k, input.charge, input.now);
}

/** Decayed scores of `keys` at `now`. */
export async function readScores(
  c: Queryable,
  keys: readonly string[],
  halfLifeMs: number,
  now: number,
): Promise<number[]> {
  const r = await c.query<{ key: string; score: number }>(
    "SELECT key, score * power(0.5, GREATEST(0, $2 - updated_at)::float8 / $3) AS score FROM claim_reputation WHERE key = ANY($1)",
    [keys, now, halfLifeMs],
  );
  const by = new Map(r.rows.map((row) => [row.key, Number(row.score)]));
  return keys.map((k) => by.get(k) ?? 0);
}

/** Spends one use of an admission token; false when it has none left. */
export async function spendTokenUse(
  c: Queryable,
  use: { hash: string; maxUses: number; expiresAt: number },
): Promise<boolean> {
  const r = await c.query(
    `INSERT INTO claim_admission_tokens (hash, uses, expires_at) VALUES ($1, 1, $2)
     ON CONFLICT (hash) DO UPDATE SET uses = claim_admission_tokens.uses + 1 WHERE claim_admission_tokens.uses < $3`,
    [use.hash, use.expiresAt, use.maxUses],
  );
  return r.rowCount === 1;
}

/** How many uses an admission token has spent. */
export async function tokenUses(c: Queryable, hash: string): Promise<number> {
  const r = await c.query<{ uses: number }>("SELECT uses FROM claim_admission_tokens WHERE hash = $1", [hash]);
  return Number(r.rows[0]?.uses ?? 0);
}

/** Forgets spent tokens past their expiry and scores decayed to nothing. */
export async function pruneReputation(c: Queryable, now: number, halfLifeMs: number | undefined): Promise<void> {
  await c.query("DELETE FROM claim_admission_tokens WHERE expires_at <= $1", [now]);
  if (halfLifeMs !== undefined)
    await c.query("DELETE FROM claim_reputation WHERE updated_at < $1", [now - 30 * halfLifeMs]);
}
