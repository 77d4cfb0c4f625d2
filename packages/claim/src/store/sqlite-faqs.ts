import type { Database } from "better-sqlite3";
import type { FaqBody } from "../content/faq.js";
import { newContentId } from "../ids/random-ids.js";
import type { FaqRow } from "./claim-store.js";

/** The FAQ rows of {@link SqliteClaimStore} (`claim_faqs`); synchronous, transactions are the caller's. */

/** Inserts a draft FAQ; `limit` when the sandbox already has `max` FAQs, `slug_taken` for a duplicate slug. */
export function insertFaq(
  db: Database,
  sandboxId: string,
  body: FaqBody,
  max: number,
  now: number,
): FaqRow | "limit" | "slug_taken" {
  const n =
    db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM claim_faqs WHERE sandbox_id = ?").get(sandboxId)
      ?.n ?? 0;
  if (n >= max) return "limit";
  if (db.prepare("SELECT 1 FROM claim_faqs WHERE sandbox_id = ? AND slug = ?").get(sandboxId, body.slug) !== undefined)
    return "slug_taken";
  const id = newContentId("faq");
  db.prepare(
    "INSERT INTO claim_faqs (id, sandbox_id, slug, body, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'draft', ?, ?)",
  ).run(id, sandboxId, body.slug, JSON.stringify(body), now, now);
  return { id, sandbox_id: sandboxId, status: "draft", body, updated_at: now };
}

/** The FAQs of a sandbox (optionally only published ones), oldest first. */
export function listFaqRows(db: Database, sandboxId: string, onlyPublished: boolean): FaqRow[] {
  const rows = db
    .prepare<
      [string],
      { id: string; sandbox_id: string; status: "draft" | "published"; body: string; updated_at: number }
    >(
      `SELECT id, sandbox_id, status, body, updated_at FROM claim_faqs WHERE sandbox_id = ? ${onlyPublished ? "AND status = 'published'" : ""} ORDER BY created_at, rowid`,
    )
    .all(sandboxId);
  return rows.map((r) => ({ ...r, body: JSON.parse(r.body) as FaqBody }));
}

/**
 * Replaces an FAQ's body; false when it does not exist or the new slug is taken (unique constraint), and with
 * `draftOnly` when it is published (one statement: the status is checked where the body is written).
 */
export function updateFaqRow(
  db: Database,
  sandboxId: string,
  faqId: string,
  body: FaqBody,
  now: number,
  draftOnly = false,
): boolean {
  try {
    return (
      db
        .prepare(
          `UPDATE claim_faqs SET body = ?, slug = ?, updated_at = ? WHERE id = ? AND sandbox_id = ?${draftOnly ? " AND status = 'draft'" : ""}`,
        )
        .run(JSON.stringify(body), body.slug, now, faqId, sandboxId).changes === 1
    );
  } catch {
    return false;
  }
}

/** Deletes an FAQ; false when it does not exist. */
export function deleteFaqRow(db: Database, sandboxId: string, faqId: string): boolean {
  return db.prepare("DELETE FROM claim_faqs WHERE id = ? AND sandbox_id = ?").run(faqId, sandboxId).changes === 1;
}
