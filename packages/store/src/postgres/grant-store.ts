import type { PostgresStore } from "./open-postgres-store.js";
import { assertStorableText, PostgresStoreError } from "./postgres-store-error.js";

/**
 * Approvals wider than one call (a time window, or a session), kept where every node reads them: the
 * `state.db` store's contract (`ConsentGrantStore`), answered asynchronously. A row is the consent request
 * and the signed response under the key of the call it covers; the broker verifies the signature and the
 * exact action before it reuses one, so a row written by hand approves nothing.
 */
export interface AsyncConsentGrantStore {
  /** Keeps a grant for the call `key` until `untilMs` (and drops the grants that ended by `nowMs`). */
  add(key: string, untilMs: number, grant: unknown, nowMs: number): Promise<void>;
  /** The grants for `key` that have not ended at `nowMs`, the latest ending first (unreadable rows skipped). */
  find(key: string, nowMs: number): Promise<unknown[]>;
  /** Deletes the grants that ended by `nowMs`; returns how many. */
  deleteEnded(nowMs: number): Promise<number>;
}

/** The most grants kept for one call (the latest ending): a bound on what a flood of approvals can store. */
const MAX_PER_KEY = 16;

/** The grants table: one row per wider approval, shared by every node on the database. */
export const CONSENT_GRANTS_TABLE = `
CREATE TABLE consent_grants (
  id            BIGSERIAL PRIMARY KEY,
  key           TEXT   NOT NULL,
  until_ms      BIGINT NOT NULL,
  grant_json    TEXT   NOT NULL,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX consent_grants_key ON consent_grants (key, until_ms);
CREATE INDEX consent_grants_until ON consent_grants (until_ms);`;

function finiteMs(value: number, what: string): number {
  if (!Number.isFinite(value))
    throw new PostgresStoreError("postgres_input_invalid", `consent grants: invalid ${what}`);
  return Math.floor(value);
}

/** The approval grants on PostgreSQL (the table comes with the store's migrations). */
export function createPostgresConsentGrantStore(store: PostgresStore): AsyncConsentGrantStore {
  return {
    async add(key, untilMs, grant, nowMs) {
      assertStorableText(key, "consent grants: key");
      const json = JSON.stringify(grant);
      if (typeof json !== "string") throw new PostgresStoreError("postgres_input_invalid", "consent grants: no grant");
      const until = finiteMs(untilMs, "end");
      const now = finiteMs(nowMs, "time");
      await store.transaction(async (client) => {
        // ended grants go as new ones come: the table stays as small as what is still open
        await client.query("DELETE FROM consent_grants WHERE until_ms <= $1", [now]);
        await client.query(
          "INSERT INTO consent_grants (key, until_ms, grant_json, created_at_ms) VALUES ($1, $2, $3, $4)",
          [key, until, json, now],
        );
        await client.query(
          `DELETE FROM consent_grants WHERE key = $1 AND id NOT IN
             (SELECT id FROM consent_grants WHERE key = $1 ORDER BY until_ms DESC, id DESC LIMIT ${MAX_PER_KEY})`,
          [key],
        );
      });
    },
    async find(key, nowMs) {
      if (typeof key !== "string" || key === "" || key.includes("\u0000")) return [];
      const rows = await store.query<{ grant_json: string }>(
        "SELECT grant_json FROM consent_grants WHERE key = $1 AND until_ms > $2 ORDER BY until_ms DESC, id DESC",
        [key, finiteMs(nowMs, "time")],
      );
      const out: unknown[] = [];
      for (const row of rows.rows) {
        try {
          out.push(JSON.parse(row.grant_json) as unknown);
        } catch {
          // an unreadable row approves nothing
        }
      }
      return out;
    },
    async deleteEnded(nowMs) {
      const result = await store.query("DELETE FROM consent_grants WHERE until_ms <= $1", [finiteMs(nowMs, "time")]);
      return result.rowCount ?? 0;
    },
  };
}
