import type { Database } from "better-sqlite3";
import { decayScore } from "../admission/reputation.js";
import type { ChargeInput, ReputationCharge } from "./claim-store.js";

/**
 * Reputation and admission-token bookkeeping of {@link SqliteClaimStore} (`claim/002-reputation`). Synchronous;
 * the callers run them inside the store's immediate transactions, so each read-decay-write is atomic.
 */

/** Adds `charge.points` to `key`, decaying the stored score to `now` first. */
export function chargeKey(db: Database, key: string, charge: ReputationCharge, now: number): void {
  const row = db
    .prepare<[string], { score: number; updated_at: number }>(
      "SELECT score, updated_at FROM claim_reputation WHERE key = ?",
    )
    .get(key);
  const score = (row === undefined ? 0 : decayScore(row.score, row.updated_at, now, charge.halfLifeMs)) + charge.points;
  db.prepare(
    "INSERT INTO claim_reputation (key, score, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET score = excluded.score, updated_at = excluded.updated_at",
  ).run(key, score, Math.max(now, row?.updated_at ?? now));
}

/** The keys a sandbox was created under (source range, issuer subject). */
export function sandboxKeys(db: Database, id: string): string[] {
  const row = db
    .prepare<[string], { source_key: string | null; subject_key: string | null }>(
      "SELECT source_key, subject_key FROM claim_sandboxes WHERE id = ?",
    )
    .get(id);
  return [row?.source_key, row?.subject_key].filter((k): k is string => typeof k === "string" && k !== "");
}

/** Charges the input's keys and its sandbox's keys, each once. */
export function chargeAll(db: Database, input: ChargeInput): void {
  const keys = new Set(input.keys);
  if (input.sandboxId !== undefined) for (const k of sandboxKeys(db, input.sandboxId)) keys.add(k);
  for (const k of keys) chargeKey(db, k, input.charge, input.now);
}

/** Decayed scores of `keys` at `now`. */
export function readScores(db: Database, keys: readonly string[], halfLifeMs: number, now: number): number[] {
  const stmt = db.prepare<[string], { score: number; updated_at: number }>(
    "SELECT score, updated_at FROM claim_reputation WHERE key = ?",
  );
  return keys.map((k) => {
    const row = stmt.get(k);
    return row === undefined ? 0 : decayScore(row.score, row.updated_at, now, halfLifeMs);
  });
}

/** Spends one use of an admission token; false when it has none left. */
export function spendTokenUse(db: Database, use: { hash: string; maxUses: number; expiresAt: number }): boolean {
  return (
    db
      .prepare(
        "INSERT INTO claim_admission_tokens (hash, uses, expires_at) VALUES (?, 1, ?) ON CONFLICT (hash) DO UPDATE SET uses = uses + 1 WHERE uses < ?",
      )
      .run(use.hash, use.expiresAt, use.maxUses).changes === 1
  );
}

/** Forgets spent tokens past their expiry (they can no longer verify) and scores decayed to nothing. */
export function pruneReputation(db: Database, now: number, halfLifeMs: number | undefined): void {
  db.prepare("DELETE FROM claim_admission_tokens WHERE expires_at <= ?").run(now);
  if (halfLifeMs !== undefined)
    db.prepare("DELETE FROM claim_reputation WHERE updated_at < ?").run(now - 30 * halfLifeMs);
}
